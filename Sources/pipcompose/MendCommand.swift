import ArgumentParser
import Compositor
import Foundation

struct MendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mend",
        abstract: "Mend recordings cut short (a power loss, a crash) to end on their last whole frame, in place.",
        discussion: """
            pipcompose mends a recording itself when a full disk stops it. Use this for a file cut short any other \
            way: it must be an MP4 (fragmented, as pipcompose records), Matroska or MPEG-TS file, told by its first \
            bytes. Each file's line says what was changed: the frames kept and dropped, the bytes rewritten in place \
            and the bytes cut; a whole MP4 or Matroska file is left as it is. An MPEG-TS frame over 64 KB does not \
            say where it ends, so when it is the file's last frame it is cut even if whole. A file a running \
            pipcompose is still recording is refused.
            """
    )

    @Argument(help: "Recordings to mend.")
    var files: [String]

    func run() throws {
        var failed = 0
        for path in files {
            do {
                let r = try RecordingMend.mend(path)
                // "Whole" only for a file left untouched: a mend that only rewrote header fields changed it too.
                if r.changed {
                    print("\(path): \(r.container.rawValue), mended to end on its last whole frame: \(r.changes)")
                } else {
                    print("\(path): \(r.container.rawValue), whole; nothing changed")
                }
            } catch {
                FileHandle.standardError.write(Data("error: \(error)\n".utf8))
                failed += 1
            }
        }
        if failed > 0 { throw UserError("\(failed) of \(files.count) files could not be mended (see above)") }
    }
}
