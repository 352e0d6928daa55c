import Foundation

/// An output that serves viewers who come and go: the RTSP server and each rendition's path on it, the browsers over
/// WebRTC. The session keeps them as one `ServerSet` and asks it, never a kind by name, who watches, which pictures
/// are worth drawing, and what status says of them; a new kind of viewer-serving output conforms here, is made where
/// the session assembles its outputs, and needs nothing else of the session.
public protocol ViewerOutput: Output {
    /// The viewers it serves now (a server with several paths counts them once, on the path that owns it).
    var viewerCount: Int { get }
    /// Someone takes the main picture from it now (or has just asked for it): the main picture is worth drawing.
    var wantsMain: Bool { get }
    /// The renditions someone takes from it now, or waits for a key frame of.
    var wantedRenditions: Set<PixelSize> { get }
    /// Takes its pictures from the run's encoders: the main picture's, each rendition's.
    func serve(from sources: ServingSources)
    /// Adds what status says of it beyond its id, state and counters (a rendition's URL, its sessions), if anything.
    func report(into status: inout LiveSession.Status)
}

/// What viewer-serving outputs are fed from once the run's encoders exist.
public struct ServingSources: Sendable {
    /// The main picture's encoder, which follows the render size.
    public let main: Encoder
    /// One encoder per rendition (`--rendition`).
    public let renditions: [PixelSize: Encoder]
    /// The frame clock's base (absolute system-clock time of running time 0), once the frame loop started.
    public let frameClockBase: @Sendable () -> MediaTime?
}

extension ViewerOutput {
    public func report(into status: inout LiveSession.Status) {}
}
