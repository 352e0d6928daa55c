import Foundation

/// Everything of a run that serves viewers: the viewer-serving outputs (the RTSP server and its renditions' paths,
/// WebRTC), in the order they open, and what is written for players without serving them (the HLS ladder's master
/// playlist). The session asks the set, never a kind by name, how many watch, which pictures are wanted, and opens,
/// feeds and ends them all alike.
///
/// `@unchecked Sendable`: `all` and `ladder` are set by `LiveSession.prepare()` before any other thread sees the
/// set, and only read after.
final class ServerSet: @unchecked Sendable {
    /// In the order they open and end: the renditions' paths end before the main one, whose output stops the server.
    private(set) var all: [any ViewerOutput] = []
    /// Written for players while the frames run, ended after them: the HLS ladder's master playlist (`--hls`).
    private(set) var writers: [any Output] = []
    /// Renditions made for viewers who follow their windows (`--webrtc`), within their limit.
    var windows: BrowserRenditions?

    func add(_ server: any ViewerOutput) { all.append(server) }
    func add(writer: any Output) { writers.append(writer) }

    /// Every one, servers first, in the order they end.
    var outputs: [any Output] { all + writers }

    /// The first server of a kind: the RTSP server's URL to print, WHEP for the control API.
    func first<Kind: ViewerOutput>(_ kind: Kind.Type) -> Kind? { all.lazy.compactMap { $0 as? Kind }.first }

    var viewerCount: Int { all.reduce(0) { $0 + $1.viewerCount } }
    var wantsMain: Bool { all.contains { $0.wantsMain } }
    var wantedRenditions: Set<PixelSize> { all.reduce(into: []) { $0.formUnion($1.wantedRenditions) } }

    /// Opens every server in order (a port in use stops the run before any file is created); a failure ends
    /// those already open and is thrown.
    func open() throws {
        for (i, server) in all.enumerated() {
            do { try server.open() } catch {
                for opened in all[..<i] { _ = opened.finish(timeout: 2) }
                throw error
            }
        }
    }

    func serve(from sources: ServingSources) { for server in all { server.serve(from: sources) } }

    /// Starts the writers, once the frames run. One that cannot open says so; players go without it.
    func startWriting(log: (String) -> Void) {
        for w in writers {
            do { try w.open() } catch { log("\(w.id): \(error)") }
        }
    }

    /// Ends every server (their viewers told, the port closed), then the writers (a last, final writing).
    func finish(timeout: TimeInterval) {
        close(timeout: timeout)
        for w in writers { _ = w.finish(timeout: timeout) }
    }

    /// Ends every server, leaving the writers unwritten (a start that failed).
    func close(timeout: TimeInterval) {
        for server in all { _ = server.finish(timeout: timeout) }
    }
}
