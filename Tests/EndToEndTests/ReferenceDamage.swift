import Foundation
import TestSupport

/// A scene of the timecode strip over one text widget `lower` saying `text`: the picture before and after a change
/// of that text, for `probe --reference` to tell the frames apart.
func textScene(_ dir: TempDir, _ name: String, _ text: String, size: String, strip: Double) throws -> String {
    try dir.write(name, """
    size: \(size)
    fps: 30
    widgets:
      - {id: strip, type: timecode, place: {edge: top, size: \(strip)}}
      - {id: lower, type: text, text: "\(text)", place: fill}
    """)
}

/// `probe --reference` of a file: the frames it read (first, last), how many differ from the scene, and in which of
/// the file's seconds.
func damage(_ file: String, against scene: String) throws
    -> (first: Int, last: Int, compared: Int, corrupt: Int, bySecond: [Int], out: String) {
    let r = try tool([binary, "probe", "--json", "--quiet", file, "--reference", scene])
    let report = (try? JSONSerialization.jsonObject(with: Data(r.out.utf8))) as? [String: Any]
    let total = report?["total"] as? [String: Any], fidelity = report?["fidelity"] as? [String: Any]
    let sum = fidelity?["total"] as? [String: Any]
    let seconds = (fidelity?["seconds"] as? [[String: Any]] ?? []).map { $0["corrupt"] as? Int ?? -1 }
    return (total?["firstFrame"] as? Int ?? -1, total?["lastFrame"] as? Int ?? -1, sum?["compared"] as? Int ?? -1,
            sum?["corrupt"] as? Int ?? -1, seconds, r.out + r.err)
}
