import Foundation

/// An output the topology places on an encoder and moves when the picture changes size: a recording, a push, a
/// user's pipeline, an HLS rung (`PipelineOutput` is the one kind today). The running graph holds them by id;
/// `Topology` computes what a resize or a start does to them, and the session carries it out through these calls
/// without knowing which kind it moves.
public protocol PlacedOutput: Output {
    /// What was asked for (a file, a URL, a pipeline of the user's), and the file it writes, if it writes one.
    var spec: OutputSpec { get }
    var location: String? { get }
    /// The rendition it carries (`--output-rendition`), nil for the main picture.
    var rendition: PixelSize? { get }
    /// Still running, or going to again (a push retrying); false once it failed or was stopped.
    var isAlive: Bool { get }
    /// Ended for good with nothing left for the run's end to do: stopped with its end written (or before it ever
    /// ran), or failed and closed. The run may keep only its counts (`RunTally`).
    var hasEnded: Bool { get }
    /// How often it started over (a push whose server went away).
    var restarts: Int { get }
    /// Builds what it runs without starting it: the checks `--dump-pipeline` and `ctl record start` make first.
    func prepare() throws -> String
    /// Takes the frames of `encoder` stamped `time` or later.
    func feed(from encoder: Encoder, startingAt time: MediaTime)
    /// From the frame stamped `time` on, frames come from `next` (which makes a key frame there).
    func switchSource(to next: Encoder, at time: MediaTime)
    /// Ends it after its last frame before `time` (a split part).
    func end(at time: MediaTime)
    /// `encoder` was stopped and drained: frames waiting for it go out.
    func sourceEnded(_ encoder: Encoder)
}

extension PipelineOutput: PlacedOutput {
    public var isAlive: Bool { state != .failed && state != .stopped }
}
