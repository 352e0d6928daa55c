import Foundation

/// A file an HTTP route serves from a folder: only below it, links resolved (a link out of the folder, `..` or an
/// absolute path is nothing).
enum FolderFile {
    /// The real path of `relative` below `folder` (itself a real path), or nil.
    static func resolve(_ relative: String, below folder: String) -> String? {
        guard !relative.split(separator: "/").contains(".."),
              let real = realpath(folder + "/" + relative, nil).map({ p -> String in
                  defer { free(p) }
                  return String(cString: p)
              }),
              real.hasPrefix(folder == "/" ? "/" : folder + "/") else { return nil }
        return real
    }
}
