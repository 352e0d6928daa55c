import Foundation

/// Mends a recording cut short where pipcompose could not mend it itself (a power loss, a crash in the middle of a
/// write, a file copied while it grew): what `pipcompose mend` does. The container is told by the file's first
/// bytes, not its name, and the file is mended in place by `FragmentMend`, `MatroskaMend` or `TransportStreamMend`.
public enum RecordingMend {
    public enum Container: String, Sendable {
        case mp4 = "MP4", matroska = "Matroska", transportStream = "MPEG-TS"
    }

    /// What a mend did to a file.
    public struct Result: Sendable {
        public let container: Container
        /// Bytes cut from the end.
        public let bytesCut: UInt64
        /// Bytes changed in place (header fields that claimed frames never written).
        public let bytesRewritten: Int
        /// Frames the file's last fragment, cluster or packets began that were not whole.
        public let framesDropped: Int
        /// Frames the last fragment (MP4) or cluster (Matroska) keeps; nil where they are not counted (MPEG-TS).
        public let framesKept: Int?

        /// Whether the file was touched at all: a file is whole only when nothing was cut and nothing rewritten.
        public var changed: Bool { bytesCut > 0 || bytesRewritten > 0 }

        /// What was changed, for people: the frames kept and dropped, then the bytes rewritten and cut.
        public var changes: String {
            FragmentMend.Outcome(bytesCut: bytesCut, samplesDropped: framesDropped, bytesRewritten: bytesRewritten,
                                 samplesKept: framesKept).changes(in: container)
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Mends the recording at `path` in place. Throws, leaving the file as it was, when it cannot be opened, is not a
    /// recording pipcompose writes (fragmented MP4, Matroska, MPEG-TS), or is damaged before its end.
    public static func mend(_ path: String) throws -> Result {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw Failure(description: "\(path): cannot open it (does it exist, and may you read it?)")
        }
        let head = (try? handle.read(upToCount: 189)) ?? Data()
        try? handle.close()
        guard FileManager.default.isWritableFile(atPath: path) else {
            throw Failure(description: "\(path): cannot write it; mending changes the file in place")
        }
        guard !WriterLock.isHeld(path) else {
            throw Failure(description: "\(path): a running pipcompose is recording it; stop that recording first "
                          + "(Ctrl-C, or `pipcompose ctl record stop`), which finalizes it")
        }
        guard !head.isEmpty else {
            throw Failure(description: "\(path): empty; nothing was written, so there is nothing to mend")
        }
        guard let container = container(of: [UInt8](head)) else {
            throw Failure(description: "\(path): not an MP4, Matroska or MPEG-TS recording (its first bytes are none "
                          + "of ftyp, an EBML header or a 0x47 sync byte)")
        }
        guard let outcome = container.mend(path) else {
            throw Failure(description: "\(path): looks like \(container.rawValue) but its header or structure is not "
                          + "what a recording has (an MP4 must be fragmented, as pipcompose writes it); left as it is")
        }
        return Result(container: container, bytesCut: outcome.bytesCut, bytesRewritten: outcome.bytesRewritten,
                      framesDropped: outcome.samplesDropped, framesKept: outcome.samplesKept)
    }

    /// The container the first bytes of a file say, or nil.
    static func container(of head: [UInt8]) -> Container? {
        if head.count >= 8, head[4..<8].elementsEqual("ftyp".utf8) { return .mp4 }
        if head.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return .matroska }
        if head.first == 0x47, head.count < 189 || head[188] == 0x47 { return .transportStream }
        return nil
    }
}

extension RecordingMend.Container {
    /// Mends the file at `path` in place as this container (see the menders); nil when it cannot.
    func mend(_ path: String) -> FragmentMend.Outcome? {
        switch self {
        case .mp4: FragmentMend.mend(path)
        case .matroska: MatroskaMend.mend(path)
        case .transportStream: TransportStreamMend.mend(path)
        }
    }

    /// What the last frames of a recording are grouped in, where a mend counts them.
    var lastPart: String? {
        switch self {
        case .mp4: "fragment"
        case .matroska: "cluster"
        case .transportStream: nil
        }
    }
}

extension FragmentMend.Outcome {
    /// What the mend of a `container` changed, for people: "the last fragment keeps 6 of its 11 frames (5
    /// dropped); 9 bytes rewritten in place, 0 bytes cut".
    func changes(in container: RecordingMend.Container) -> String {
        var frames = ""
        if let kept = samplesKept, let part = container.lastPart {
            frames = "the last \(part) keeps \(kept) of its \(kept + samplesDropped) frames "
                + "(\(samplesDropped) dropped); "
        } else if samplesDropped > 0 {
            frames = "\(samplesDropped) frames dropped; "
        }
        return frames + "\(bytesRewritten) bytes rewritten in place, \(bytesCut) bytes cut"
    }
}

extension RecordingMend {
    /// Opens `path` to read and write, and hands `body` its descriptor and size: what every mender starts with. Nil
    /// when the file cannot be opened or is not a regular file.
    static func withFile<T>(_ path: String, _ body: (_ fd: Int32, _ size: UInt64) -> T?) -> T? {
        let fd = open(path, O_RDWR | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        // Only a regular file can be mended (a recording into a FIFO or a device is left alone).
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
        return body(fd, UInt64(st.st_size))
    }
}
