import Foundation

/// CPU time and resident memory of this process, read from /proc/self.
public struct ProcessSampler: Sendable {
    private var lastCPU: Double
    private var lastWall: Double

    public init() {
        lastCPU = Self.cpuSeconds() ?? 0
        lastWall = Self.monotonic()
    }

    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// User + system CPU seconds of this process so far (all threads).
    public static func cpuSeconds() -> Double? {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return nil }
        func s(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return s(usage.ru_utime) + s(usage.ru_stime)
    }

    /// Resident set size in bytes (`/proc/self/statm`, second field, in pages).
    public static func residentBytes() -> UInt64? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = UInt64(fields[1]) else { return nil }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// CPU use since the last call, in percent of one core (200 = two cores busy).
    public mutating func cpuPercent() -> Double {
        let cpu = Self.cpuSeconds() ?? lastCPU
        let wall = Self.monotonic()
        defer { lastCPU = cpu; lastWall = wall }
        let dt = wall - lastWall
        return dt > 0 ? (cpu - lastCPU) / dt * 100 : 0
    }
}
