import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The control API's token: made at random for each run unless the user gives one, and kept in a file only its
/// user can read, named by the control port, so that the same user's `pipcompose ctl` finds it with no flags
/// (as Jupyter's tools find a server's token) and nobody else can.
public enum ControlToken {
    /// 24 random bytes from the system's generator (getrandom), as 48 hex digits.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// `$XDG_RUNTIME_DIR/pipcompose` (a per-user folder the system makes 0700 and empties at logout), else
    /// `$XDG_CACHE_HOME/pipcompose` or `~/.cache/pipcompose`, made 0700.
    public static func folder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let run = environment["XDG_RUNTIME_DIR"], !run.isEmpty, run.hasPrefix("/"), isOwnFolder(run) {
            return run + "/pipcompose"
        }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/pipcompose" }
        return home(environment) + "/.cache/pipcompose"
    }

    /// The file that holds the token of the instance whose control API listens on `port`.
    public static func path(port: Int, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        folder(environment: environment) + "/control-\(port).token"
    }

    /// Writes `token` for `port`, readable by this user only; returns the file's path. The folder is made 0700; one
    /// that exists must be this user's and closed to others, or nothing is written.
    @discardableResult
    public static func store(_ token: String, port: Int,
                             environment: [String: String] = ProcessInfo.processInfo.environment) throws(Failure) -> String {
        let dir = folder(environment: environment)
        try makePrivateFolder(dir)
        let file = path(port: port, environment: environment)
        // A fresh file (0600 from mkstemp) renamed over the old one: no moment where it is readable by others or
        // half written, and a link planted at the name is replaced, not followed.
        var template = Array((dir + "/.control-\(port).XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw Failure(description: "cannot write the control token in \(dir): \(errorText())") }
        let temp = String(cString: template)
        let bytes = Array((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count, rename(temp, file) == 0 else {
            let why = errorText()
            unlink(temp)
            throw Failure(description: "cannot write the control token to \(file): \(why)")
        }
        return file
    }

    /// The token stored for `port`, if this user has one there.
    public static func load(port: Int, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let file = path(port: port, environment: environment)
        var st = stat()
        guard lstat(file, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == geteuid(),
              let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }

    /// Removes the file for `port` if it still holds `token` (a later run on the same port may have replaced it).
    public static func remove(_ token: String, port: Int,
                              environment: [String: String] = ProcessInfo.processInfo.environment) {
        guard load(port: port, environment: environment) == token else { return }
        unlink(path(port: port, environment: environment))
    }

    static func makePrivateFolder(_ dir: String) throws(Failure) {
        var st = stat()
        if lstat(dir, &st) != 0 {
            let parent = (dir as NSString).deletingLastPathComponent
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            } catch {
                throw Failure(description: "cannot make \(parent) for the control token: \(error.localizedDescription)")
            }
            guard mkdir(dir, 0o700) == 0 || errno == EEXIST, lstat(dir, &st) == 0 else {
                throw Failure(description: "cannot make \(dir) for the control token: \(errorText())")
            }
        }
        guard st.st_mode & S_IFMT == S_IFDIR, st.st_uid == geteuid() else {
            throw Failure(description: "\(dir) is not a folder of this user's: remove it, or set XDG_RUNTIME_DIR")
        }
        if st.st_mode & 0o077 != 0 && chmod(dir, 0o700) != 0 {
            throw Failure(description: "\(dir) is open to other users and cannot be closed: \(errorText())")
        }
    }

    private static func isOwnFolder(_ dir: String) -> Bool {
        var st = stat()
        return stat(dir, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR && st.st_uid == geteuid()
    }

    private static func home(_ environment: [String: String]) -> String {
        if let h = environment["HOME"], h.hasPrefix("/") { return h }
        if let pw = getpwuid(geteuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return NSTemporaryDirectory()
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}
