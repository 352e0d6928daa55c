import CProcess
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process in a session of its own, with pipes for its standard input, output and error: what a web page
/// runs in. Ending it kills its whole process group (the web and network processes WebKit starts included), and its
/// memory is counted over that group.
///
/// `@unchecked Sendable`: `pid` is set once; `reaped` is behind `lock`; reads of stdout happen on one thread.
final class IsolatedProcess: @unchecked Sendable {
    let pid: pid_t
    private let input: Int32, output: Int32, errors: Int32
    private let lock = NSLock()
    private var reaped = false
    private var inputClosed = false

    struct Failure: Error, CustomStringConvertible { let description: String }

    init(executable: String, arguments: [String], environment: [String: String]) throws {
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

    /// Writes a line to its standard input; false when it is gone.
    @discardableResult
    func send(_ line: String) -> Bool {
        lock.withLock {
            guard !inputClosed else { return false }
            let bytes = Array((line + "\n").utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes.withUnsafeBytes { send(input, $0.baseAddress! + sent, bytes.count - sent) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    inputClosed = true
                    return false
                }
                sent += n
            }
            return true
        }
    }

    private func send(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int { Glibc.write(fd, p, n) }

    /// Exactly `count` bytes of its standard output into `buffer` (which grows to fit); false at its end.
    func read(_ count: Int, into buffer: inout [UInt8]) -> Bool {
        if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
        return buffer.withUnsafeMutableBytes { read(count, to: $0.baseAddress!) }
    }

    /// Exactly `count` bytes of its standard output into memory at `destination` (named apart from the array form:
    /// `&array` would also convert to a pointer, to an array too short); false at its end.
    func read(_ count: Int, to destination: UnsafeMutableRawPointer) -> Bool {
        var got = 0
        while got < count {
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

    /// Kills the whole group and reaps the child (once).
    func kill() {
        let first = lock.withLock { () -> Bool in
            defer { reaped = true; inputClosed = true }
            return !reaped
        }
        guard first else { return }
        Glibc.kill(-pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
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
