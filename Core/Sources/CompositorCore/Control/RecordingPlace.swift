import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a recording started over the control API may write: regular files inside the folders the user gave
/// (`--record-dir`, by default the folder `run` was started in), never over an existing file unless the request
/// says `"overwrite": true`. A caller of the API is not the user at the keyboard (a script, a page, another
/// account with the token), so it gets no more than the user handed over. Recordings named on the command line
/// are the user's own choice and are not checked here.
public struct RecordingPlace: Sendable {
    /// The folders, made absolute and with their links resolved.
    public let folders: [String]

    public init(folders: [String]) {
        self.folders = folders.map { Self.resolved($0) ?? URL(fileURLWithPath: $0).standardizedFileURL.path }
    }

    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// The absolute path to record to, once every rule holds; a relative `path` is taken inside the first folder.
    /// With `claim`, a new file is made on the spot (`O_EXCL`, never through a link), so nothing can be put at its
    /// name between this check and the recording's start.
    public func check(_ path: String, overwrite: Bool, claim: Bool = true) throws(Refusal) -> String {
        let rule = "the control API records only into " + folders.map { "'\($0)'" }.joined(separator: ", ")
            + " (start run with --record-dir FOLDER to allow another)"
        guard !path.isEmpty, !path.contains("\0") else { throw Refusal(description: "give the file to record to") }
        if path.split(separator: "/").contains("..") {
            throw Refusal(description: "cannot record to '\(path)': '..' is not allowed in a path given to the API; "
                          + "give the path inside the folder itself (\(rule))")
        }
        let absolute = path.hasPrefix("/") ? path : (folders.first ?? FileManager.default.currentDirectoryPath) + "/" + path
        let name = (absolute as NSString).lastPathComponent
        let parent = (absolute as NSString).deletingLastPathComponent
        guard let realParent = Self.resolved(parent) else {
            throw Refusal(description: "cannot record to '\(path)': folder '\(parent)' does not exist")
        }
        guard folders.contains(where: { realParent == $0 || realParent.hasPrefix($0 == "/" ? "/" : $0 + "/") }) else {
            throw Refusal(description: "cannot record to '\(path)': it is outside the allowed folders; \(rule)")
        }
        var target = realParent == "/" ? "/" + name : realParent + "/" + name
        var st = stat()
        if lstat(target, &st) == 0 {
            if st.st_mode & S_IFMT == S_IFLNK {
                // A link may stay inside the folders; it is then judged as the file it leads to.
                guard let real = Self.resolved(target),
                      folders.contains(where: { real.hasPrefix($0 == "/" ? "/" : $0 + "/") }) else {
                    throw Refusal(description: "cannot record to '\(path)': it is a symbolic link that leads out of the "
                                  + "allowed folders; \(rule)")
                }
                target = real
                guard stat(target, &st) == 0 else {
                    throw Refusal(description: "cannot record to '\(path)': its link leads nowhere")
                }
            }
            guard st.st_mode & S_IFMT == S_IFREG else {
                throw Refusal(description: "cannot record to '\(path)': it is not a regular file (a device, a FIFO or "
                              + "a folder); the control API writes regular files only")
            }
            guard overwrite else {
                throw Refusal(description: "cannot record to '\(path)': the file exists; send \"overwrite\": true "
                              + "(ctl record start --overwrite) to replace it, or choose another name")
            }
            return target == realParent + "/" + name ? absolute : target
        }
        if claim {
            let fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                let why = String(cString: strerror(errno))
                throw Refusal(description: "cannot record to '\(path)': \(why)")
            }
            close(fd)
        }
        // The path as given names the recording (its id), as the client that asked spelled it.
        return absolute
    }

    /// Removes the empty file `check` made to hold a name, when its recording did not start after all.
    public static func release(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size == 0 else { return }
        unlink(path)
    }

    /// `path` with every link resolved, or nil when it does not exist.
    static func resolved(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}
