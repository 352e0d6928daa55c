import Foundation

/// Where each packet of `stream` (`v:0`, `a:0`) lies in a media file, in file order, as ffprobe reads it.
public func probePackets(_ path: String, stream: String) throws -> [(pos: Int, size: Int)] {
    let r = try runProgram("/usr/bin/ffprobe", ["-v", "error", "-select_streams", stream, "-show_entries",
                                                "packet=pos,size", "-of", "csv=p=0", path])
    return r.stdout.split(separator: "\n").compactMap { line -> (pos: Int, size: Int)? in
        let f = line.split(separator: ",")
        guard f.count == 2, let size = Int(f[0]), let pos = Int(f[1]) else { return nil }
        return (pos, size)
    }.sorted { $0.pos < $1.pos }
}

/// The frames ffprobe decodes from a media file's first video stream; nil when it reads none.
public func probeDecodedFrames(_ path: String) throws -> Int? {
    let r = try runProgram("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v:0",
                                                "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path])
    return Int(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").first ?? "")
}
