import CProcess
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process in a session of its own, with pipes for its standard input, output and error: what a web page
/// runs in. Ending it kills its whole process group (the web and network processes WebKit starts included), and its
/// memory is counted over that group.
///
/// Nothing here waits on the child for long: a line sent to a child that has stopped reading its input (stopped, or
/// hung in a crash handler) gives up after `sendTimeout` and marks it `stuck` (a pipe's 64 KiB fill, and a blocking
/// write would hold the caller, and everything waiting on the caller, forever); `kill` never waits for a send, and
/// reaps a child that does not end at once on a thread of its own.
///
/// `@unchecked Sendable`: `pid` is set once; `reaped`, `inputClosed` and `stuck` are behind `lock`; writes are one at
/// a time under `writing`; reads of stdout happen on one thread.
final class IsolatedProcess: @unchecked Sendable {
    let pid: pid_t
    private let input: Int32, output: Int32, errors: Int32
    private let lock = NSLock()
    private let writing = NSLock()
    private var killed = false
    private var reaped = false
    private var _endedBy: String?
    private var inputClosed = false
    private var _stuck = false
    /// How long a line may wait for the child to read its input before the child is taken as stuck.
    static let sendTimeout: Double = 2

    struct Failure: Error, CustomStringConvertible { let description: String }

    init(executable: String, arguments: [String], environment: [String: String]) throws {
        // A line sent as the child ends fails with EPIPE, instead of SIGPIPE ending this process.
        signal(SIGPIPE, SIG_IGN)
        var fds: [[Int32]] = []
        for _ in 0..<3 {
            var p: [Int32] = [0, 0]
            guard cproc_pipe_cloexec(&p) == 0 else {
                fds.flatMap { $0 }.forEach { close($0) }
                throw Failure(description: "cannot make a pipe: \(String(cString: strerror(errno)))")
            }
            fds.append(p)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        let pid = cproc_spawn_session(executable, argv, envp, fds[0][0], fds[1][1], fds[2][1])
        close(fds[0][0])
        close(fds[1][1])
        close(fds[2][1])
        guard pid > 0 else {
            [fds[0][1], fds[1][0], fds[2][0]].forEach { close($0) }
            throw Failure(description: "cannot start \(executable)")
        }
        self.pid = pid
        // Never blocks: a full pipe is waited on with a bound (`send`).
        _ = fcntl(fds[0][1], F_SETFL, fcntl(fds[0][1], F_GETFL) | O_NONBLOCK)
        input = fds[0][1]
        output = fds[1][0]
        errors = fds[2][0]
    }

    deinit {
        kill()
        close(input)
        close(output)
        close(errors)
    }

    /// Whether a line waited `sendTimeout` for the child to read its input, in vain: it is stopped or hung.
    var stuck: Bool { lock.withLock { _stuck } }

    /// Writes a line to its standard input; false when it is gone or `stuck` (then every later line is refused too).
    @discardableResult
    func send(_ line: String) -> Bool {
        writing.withLock {
            guard lock.withLock({ !inputClosed }) else { return false }
            let bytes = Array((line + "\n").utf8)
            let deadline = Date().addingTimeInterval(Self.sendTimeout)
            var sent = 0
            while sent < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(input, $0.baseAddress! + sent, bytes.count - sent) }
                let full = n < 0 && errno == EAGAIN
                if n > 0 {
                    sent += n
                    continue
                }
                if n < 0 && errno == EINTR { continue }
                let left = deadline.timeIntervalSinceNow
                if full && left > 0 && !lock.withLock({ inputClosed }) {
                    // At most 100 ms a wait, so that a kill meanwhile is noticed.
                    var fd = pollfd(fd: input, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&fd, 1, Int32(min(left, 0.1) * 1000) + 1)
                    continue
                }
                lock.withLock {
                    if full && !inputClosed { _stuck = true }
                    inputClosed = true
                }
                return false
            }
            return true
        }
    }

    /// Exactly `count` bytes of its standard output into `buffer` (which grows to fit); false at its end (or once
    /// `within` seconds passed).
    func read(_ count: Int, into buffer: inout [UInt8], within: TimeInterval? = nil) -> Bool {
        if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
        return buffer.withUnsafeMutableBytes { read(count, to: $0.baseAddress!, within: within) }
    }

    /// Exactly `count` bytes of its standard output into memory at `destination` (named apart from the array form:
    /// `&array` would also convert to a pointer, to an array too short); false at its end, or when `within` seconds
    /// pass first (a child that stopped in the middle of what it writes: stopped, or held by a crash handler whose
    /// own process keeps the pipe open).
    func read(_ count: Int, to destination: UnsafeMutableRawPointer, within: TimeInterval? = nil) -> Bool {
        let deadline = within.map { Date().addingTimeInterval($0) }
        var got = 0
        while got < count {
            if let deadline {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { return false }
                var fd = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                let ready = poll(&fd, 1, Int32(left * 1000) + 1)
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { return false }
            }
            let n = Glibc.read(output, destination + got, count - got)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            got += n
        }
        return true
    }

    /// Its standard error, a line at a time, until it ends (on the calling thread).
    func readErrors(_ line: (String) -> Void) {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(errors, $0.baseAddress!, 4096) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            pending += chunk[..<n]
            while let nl = pending.firstIndex(of: 10) {
                line(String(decoding: pending[..<nl], as: UTF8.self))
                pending.removeFirst(nl + 1)
            }
            if pending.count > 65536 { pending.removeAll() }
        }
    }

    /// Kills the whole group and reaps the child (once), without waiting for a send under way; a child not gone
    /// within a second (a process in an uninterruptible wait) is reaped later, on a thread of its own.
    func kill() {
        let first = lock.withLock { () -> Bool in
            defer { killed = true; inputClosed = true }
            return !killed
        }
        guard first else { return }
        // The group, even when the child has ended and been reaped: what it started (WebKit's processes, a crash
        // reporter holding its pipes) lives on in it.
        Glibc.kill(-pid, SIGKILL)
        guard !lock.withLock({ reaped }) else { return }
        let pid = pid
        var status: Int32 = 0
        for _ in 0..<100 {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || (r < 0 && errno != EINTR) {
                lock.withLock { reaped = true }
                return
            }
            usleep(10_000)
        }
        let reaper = Thread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        reaper.name = "reap-\(pid)"
        reaper.start()
    }

    /// Whether the child has ended (it is reaped then; its group may live on until `kill`).
    var ended: Bool {
        lock.withLock {
            guard !reaped else { return true }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                reaped = true
                _endedBy = Self.describe(status)
            }
            return reaped
        }
    }

    /// How the child ended, once `ended` saw it: `signal 11 (SIGSEGV)`, `exit status 3`.
    var endedBy: String? { lock.withLock { _endedBy } }

    static func describe(_ status: Int32) -> String {
        let signal = status & 0x7f
        guard signal != 0 else { return "exit status \((status >> 8) & 0xff)" }
        let names: [Int32: String] = [SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGKILL: "SIGKILL", SIGBUS: "SIGBUS",
                                      SIGILL: "SIGILL", SIGTERM: "SIGTERM", SIGTRAP: "SIGTRAP", SIGFPE: "SIGFPE"]
        return "signal \(signal)" + (names[signal].map { " (\($0))" } ?? "")
    }

    /// Resident memory of every process of its session (it, WebKit's web and network processes), in bytes.
    func residentBytes() -> Int {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var total = 0
        for e in entries where e.first?.isNumber == true {
            guard let stat = try? String(contentsOfFile: "/proc/\(e)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After "pid (comm) ": state ppid pgrp session … (field 24 of the whole line: rss in pages).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 22, Int(fields[3]) == Int(pid), let rss = Int(fields[21]) else { continue }
            total += rss * page
        }
        return total
    }
}
