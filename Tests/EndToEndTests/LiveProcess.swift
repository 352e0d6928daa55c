import Foundation
import TestSupport

/// A child process the test owns: its output is collected line by line, waits are on lines appearing (with a
/// timeout), and it is ended by its own id.
///
/// `@unchecked Sendable`: the collected lines and counters are behind `cond`; `process` is thread-safe (Foundation).
final class LiveProcess: @unchecked Sendable {
    let process = Process()
    private let stdinPipe = Pipe()
    private let cond = NSCondition()
    private var outLines: [String] = []
    private var errLines: [String] = []
    private var readersDone = 0
    private var exited = false

    /// `environment` adds to (or overrides) this process's environment.
    init(_ executable: String, _ args: [String], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = stdinPipe
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        // Exit is learned from the termination handler: Foundation's `waitUntilExit` on Linux spins a run loop that
        // has no sources on a plain thread, which kept a core busy for as long as a test waited.
        // Our end of its standard input is closed when it exits, and each reader closes its end at the end of the
        // output: the test process must not keep three descriptors for every child it ran (it reached over a
        // thousand, and Foundation's Process.run crashed walking them).
        process.terminationHandler = { [weak self] _ in
            guard let self else { return }
            try? stdinPipe.fileHandleForWriting.close()
            cond.lock()
            exited = true
            cond.broadcast()
            cond.unlock()
        }
        try process.run()
        for (pipe, isErr) in [(out, false), (err, true)] {
            let t = Thread { [weak self] in
                let h = pipe.fileHandleForReading
                defer { try? h.close() }
                var pending = Data()
                while true {
                    let chunk = h.availableData
                    if chunk.isEmpty { break }
                    pending.append(chunk)
                    while let nl = pending.firstIndex(of: 0x0A) {
                        let line = String(decoding: pending[pending.startIndex..<nl], as: UTF8.self)
                        pending.removeSubrange(pending.startIndex...nl)
                        self?.collect(line, isErr: isErr, last: false)
                    }
                }
                self?.collect(pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self), isErr: isErr, last: true)
            }
            t.start()
        }
    }

    /// A reader's line (nil: none), and whether its output ended.
    private func collect(_ line: String?, isErr: Bool, last: Bool) {
        cond.lock()
        if let line { if isErr { errLines.append(line) } else { outLines.append(line) } }
        if last { readersDone += 1 }
        cond.broadcast()
        cond.unlock()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    var stdout: [String] { cond.withLock { outLines } }
    var stderr: [String] { cond.withLock { errLines } }
    var allOutput: String { (stdout + stderr).joined(separator: "\n") }

    /// Waits until a line of stdout or stderr satisfies `match`; returns it, or nil after `timeout`.
    @discardableResult
    func waitForLine(timeout: TimeInterval = 30, _ match: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        cond.lock()
        defer { cond.unlock() }
        while true {
            if let hit = (outLines + errLines).first(where: match) { return hit }
            if readersDone == 2 { return nil }
            if !cond.wait(until: deadline) { return (outLines + errLines).first(where: match) }
        }
    }

    /// Waits until at least `count` lines of stdout or stderr satisfy `match` (which must not call back into
    /// this process object).
    func waitForLines(count: Int, timeout: TimeInterval = 30, _ match: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        cond.lock()
        defer { cond.unlock() }
        while true {
            if (outLines + errLines).filter(match).count >= count { return true }
            if readersDone == 2 || !cond.wait(until: deadline) { return (outLines + errLines).filter(match).count >= count }
        }
    }

    func send(_ line: String) {
        try? stdinPipe.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits for a periodic status line (run with --status-every) showing `output` past `frames` frames.
    func waitForFrames(_ output: String, atLeast frames: Int, timeout: TimeInterval = 60) -> Bool {
        waitForLine(timeout: timeout) { line in
            line.contains(" \(output): ") && (Self.frames(in: line) ?? 0) >= frames
        } != nil
    }

    /// Waits for a periodic status line of `run --status-every` ("status: 640x360 frame N rendered …") past frame `n`.
    func waitForFrame(_ n: Int, timeout: TimeInterval = 30) -> Bool {
        waitForLine(timeout: timeout) { line in
            guard let r = line.range(of: #"frame (\d+) rendered"#, options: .regularExpression) else { return false }
            return (Int(line[r].split(separator: " ")[1]) ?? 0) >= n
        } != nil
    }

    /// "…: running, 123 frames, …" → 123
    static func frames(in line: String) -> Int? {
        guard let r = line.range(of: #"(\d+) frames"#, options: .regularExpression) else { return nil }
        return Int(line[r].split(separator: " ")[0])
    }

    func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// User + system CPU seconds the process has used so far (from /proc); 0 once it is gone.
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // Fields after the command's closing parenthesis start at field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Whether it has exited, without waiting.
    var hasExited: Bool { cond.withLock { exited } }

    /// Waits for the process to exit; nil if it did not within `timeout` (then it is killed).
    func waitForExit(timeout: TimeInterval = 30) -> Int32? {
        guard waitUntil(Date().addingTimeInterval(timeout), { exited }) else {
            kill(process.processIdentifier, SIGKILL)
            _ = waitUntil(Date().addingTimeInterval(10)) { exited }
            return nil
        }
        // Let the readers drain what is left.
        _ = waitUntil(Date().addingTimeInterval(5)) { readersDone == 2 }
        return process.terminationStatus
    }

    /// Waits on `cond` until `done` (read under the lock) holds or `deadline` passes; whether it holds.
    private func waitUntil(_ deadline: Date, _ done: () -> Bool) -> Bool {
        cond.lock()
        defer { cond.unlock() }
        while !done() {
            if !cond.wait(until: deadline) { return done() }
        }
        return true
    }
}

/// Runs a tool to completion and returns its status and output.
func tool(_ args: [String], timeout: TimeInterval = 60) throws -> (status: Int32, out: String, err: String) {
    let p = try LiveProcess("/usr/bin/env", args)
    let status = p.waitForExit(timeout: timeout) ?? -1
    return (status, p.stdout.joined(separator: "\n"), p.stderr.joined(separator: "\n"))
}

/// Frames ffprobe decodes from a file or URL.
func decodedFrames(_ path: String) throws -> Int? { try probeDecodedFrames(path) }

/// Widths and heights of every decoded frame.
func frameSizes(_ path: String) throws -> [String] {
    let r = try tool(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=width,height",
                      "-of", "compact=p=0:nk=1", path])
    // Lines are "W|H", sometimes followed by side data on lines of their own: keep the size lines.
    return r.out.split(separator: "\n").compactMap { line in
        let parts = line.split(separator: "|")
        guard parts.count >= 2, let w = Int(parts[0]), let h = Int(parts[1]) else { return nil }
        return "\(w)x\(h)"
    }
}
