import Foundation

/// Where the encoded picture and sound go: a recording, a push or a pipeline of the user's (`PipelineOutput`), the
/// RTSP server (`RTSPOutput`), the browsers (`WebRTCOutput`). The session opens, feeds, counts and ends them alike;
/// what sets them apart (a recording's file policy at a resize, a server's viewers) stays in each.
public protocol Output: AnyObject, Sendable {
    /// `record:PATH`, `push:URL`, `pipeline:NAME#N`, `rtsp`, `webrtc`: how status, events and the API name it.
    var id: String { get }
    /// What `status` shows: `running`, `failed`, `serving rtsp://…`, `serving 2 WebRTC viewer(s)`.
    var stateText: String { get }
    /// Frames handed on, frames its queues dropped, bytes written or sent.
    var delivered: UInt64 { get }
    var dropped: UInt64 { get }
    var bytes: UInt64 { get }
    /// Opens what it needs (a file, a server's port, a connection); throws what keeps it from starting. A push
    /// whose server is not there yet says so and keeps retrying instead.
    func open() throws
    /// Takes the encoded picture from `encoder` from now on.
    func feed(from encoder: Encoder)
    /// Takes the sound from `track`.
    func hear(_ track: AudioTrack)
    /// Ends it: a file's end of stream written (within `timeout`), a server's viewers told and its port closed.
    func finish(timeout: TimeInterval) -> OutputEnding
    /// Ends it as the run ends; false when a file it writes did not get its end in time. A server's ending never
    /// fails the run.
    func finishAsRunEnds() -> Bool
    /// How often it failed, and the last failure; nil when it never did.
    var failures: OutputFailures? { get }
}

/// An output's failures: how many, the last one's message, and whether it was waiting to retry when it was ended
/// (a push whose server was not there at the end: what it sent did not reach it since that failure).
public struct OutputFailures: Sendable, Equatable {
    public var count: Int
    public var last: String
    public var retryingAtEnd: Bool

    /// What the end-of-run summary adds to the output's line.
    public var summary: String {
        (count == 1 ? "failed once" : "failed \(count) times")
            + (retryingAtEnd ? ", waiting to retry when the run ended (not reaching its server)" : "")
            + "; the last: \(last)"
    }
}

extension Output {
    public var failures: OutputFailures? { nil }

    public func finishAsRunEnds() -> Bool {
        _ = finish(timeout: 3)
        return true
    }
}

/// How an output ended.
public enum OutputEnding: Sendable, Equatable {
    /// Its end of stream went through: the file is finalized, the server was told.
    case finalized
    /// It failed, before or while finishing, and was closed with its message: its file ends where the
    /// failure left it (mended when cut part way). The run does not wait for it.
    case failed
    /// Its end of stream did not come out in time; it was stopped anyway and its file may lack its end.
    case timedOut
    /// It could not even be stopped (its sink blocked in a write that never returns: a FIFO nobody reads, a hung
    /// mount): it was left behind as it was, its file as far as it got, and the run went on without it.
    case abandoned

    /// Whether a file it wrote got its end.
    public var isWhole: Bool { self == .finalized || self == .failed }
}
