import Foundation

/// Marks a recording as being written while its pipeline runs: a shared `flock` on the file, so that
/// `pipcompose mend` (RecordingMend) refuses to cut a file under its writer. The lock belongs to an open file of this
/// process, so it ends with the process, `kill -9` included, and a file left by a dead process can be mended.
final class WriterLock: @unchecked Sendable {
    private let lock = NSLock()
    private var fd: Int32

    /// Nil when the file cannot be opened (its sink has not created it), is not a regular file (a FIFO or a device:
    /// holding a FIFO open would keep its writer from seeing its reader go), or the lock cannot be taken.
    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, flock(fd, LOCK_SH | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
    }

    /// Lets go of the lock (before the file is mended, and when its recording ends).
    func release() {
        lock.withLock {
            guard fd >= 0 else { return }
            close(fd)
            fd = -1
        }
    }

    deinit { release() }

    /// Whether a running recording holds the file at `path` (a writer's lock is there).
    static func isHeld(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
        flock(fd, LOCK_UN)
        return false
    }
}
