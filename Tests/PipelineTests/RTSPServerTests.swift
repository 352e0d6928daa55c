import Foundation
import Testing
@testable import Compositor

@Suite(.serialized) struct RTSPServerTests {
    /// Two servers in one process (as `soak` runs them) each give their own title as the SDP session name that
    /// players show; the name was process-wide, so every stream carried the last server's title.
    @Test func twoServersInOneProcessKeepTheirOwnTitles() throws {
        let launch = "videotestsrc is-live=true ! x264enc tune=zerolatency speed-preset=ultrafast ! rtph264pay name=pay0 pt=96"
        let servers = ["stream one", "stream two"].map { title in
            RTSPServer(endpoint: RTSPEndpoint(host: "127.0.0.1", port: 0, path: "/pip"), mediaLaunch: launch, title: title)
        }
        defer { servers.forEach { $0.stop() } }
        for s in servers { try s.start() }
        for (server, title) in zip(servers, ["stream one", "stream two"]) {
            let r = try runTool(["ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-show_entries", "format_tags=title",
                                 "-of", "csv=p=0", server.url])
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == title, "\(server.url): \(r.stdout)")
        }
    }
}
