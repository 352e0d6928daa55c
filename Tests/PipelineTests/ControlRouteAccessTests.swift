import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport
@testable import Compositor

/// A session that answers the control API and counts what reached it: the HTTP layer's own tests need no
/// renderer or encoder, and can show that a refused request reaches nothing.
final class CountingSession: ControlledSession, @unchecked Sendable {
    let events = EventBus()
    let log: @Sendable (String) -> Void = { _ in }
    private let lock = NSLock()
    private var _calls: [String] = []
    var calls: [String] { lock.withLock { _calls } }
    private func called(_ name: String) { lock.withLock { _calls.append(name) } }

    func statusPayload() -> StatusPayload {
        called("status")
        let json = #"{"state":"playing","width":160,"height":90,"fps":30,"frame":0,"rendered":0,"repeated":0,"dropped":0,"#
            + #""injected":0,"idle":0,"sceneTime":0,"live":true,"viewers":0,"uptime":0,"outputs":[],"audio":"none","#
            + #""audioPackets":0,"inputs":[]}"#
        return try! JSONDecoder().decode(StatusPayload.self, from: Data(json.utf8))
    }
    func metricsText() -> String { called("metrics"); return "pipcompose_frames_rendered_total 0\n" }
    func resize(to size: PixelSize) { called("resize") }
    func pause() { called("pause") }
    func play() { called("play") }
    func skip(by seconds: Double) throws(ControlError) -> SkipOutcome { called("skip"); return SkipOutcome() }
    func skipTrack(forward: Bool) throws(ControlError) -> SkipOutcome { called("skipTrack"); return SkipOutcome() }
    func updateWidget(id: String, properties: [String: JSONValue], at moment: ChangeMoment?) throws(ControlError) {
        called("updateWidget")
    }
    func startOutput(_ spec: OutputSpec, rendition: PixelSize?) throws(ControlError) -> String { called("startOutput"); return "x" }
    func stopOutput(id: String) throws(ControlError) { called("stopOutput") }
    func framePNG(size: PixelSize?) async throws -> Data { called("framePNG"); return Data() }
    func nowPlaying() -> NowPlayingPayload {
        called("nowPlaying")
        return NowPlayingPayload(title: "", artist: "", album: "", artwork: nil, playing: true, position: 0,
                                 duration: nil, seek: false, tracks: false)
    }
    func artworkPNG(side: Int) throws -> Data? { called("artworkPNG"); return nil }
    var whep: (any WHEPService)? { nil }
    var rtspViewersByLink: [String: Int] { [:] }
    func browserIceServers(label: String) -> [IceSettings.BrowserServer] { [] }
    var hlsFolder: String? { nil }
    func follow(viewer: String, window: PixelSize?) throws(ControlError) -> FollowOutcome {
        called("follow")
        return FollowOutcome(session: viewer, picture: "main", width: 0, height: 0, made: false, exact: true)
    }
    func webSnapshot(id: String, data: String, size: PixelSize?) async throws(ControlError) -> Data {
        called("webSnapshot")
        return Data()
    }
    func webCall(id: String, call: String, data: String?, name: String?, at moment: ChangeMoment?)
        async throws(ControlError) -> String {
        called("webCall")
        return "done"
    }
}

/// The control API's access rules on its routes, in this process, with no picture behind them.
@Suite struct ControlRouteAccessTests {
    func withServer(token: String? = ControlServerTests.token,
                    _ body: (CountingSession, Application<RouterResponder<ControlContext>>) async throws -> Void)
        async throws {
        let session = CountingSession()
        let access = ControlAccess(token: token, hosts: ControlAccess.hosts(listeningOn: "127.0.0.1", extra: []))
        let server = try ControlServer(session: session, host: "127.0.0.1", port: 0, access: access)
        try await body(session, Application(router: server.makeRouter()))
    }

    @Test func aTokenIsRequiredWhenOneIsSet() async throws {
        try await withServer(token: "s3cret") { session, app in
            try await app.test(.router) { client in
                try await client.execute(uri: "/v1/status", method: .get) { r in
                    #expect(r.status == .unauthorized)
                    #expect(r.headers[.wwwAuthenticate] == "Bearer")
                }
                try await client.execute(uri: "/v1/status", method: .get, headers: [.authorization: "Bearer wrong"]) { r in
                    #expect(r.status == .unauthorized)
                }
                try await client.execute(uri: "/nowhere", method: .get) { r in
                    #expect(r.status == .unauthorized, "unknown paths are guarded too")
                }
                try await client.execute(uri: "/v1/status", method: .get, headers: [.authorization: "Bearer s3cret"]) { r in
                    #expect(r.status == .ok)
                }
                try await client.execute(uri: "/v1/status?token=s3cret", method: .get) { r in #expect(r.status == .ok) }
            }
            #expect(session.calls == ["status", "status"], "only the two requests with the token reached the session")
        }
    }

    /// Every verb refused for a page elsewhere, and for a body not declared JSON, before it reaches the session.
    @Test func refusedVerbsReachNothing() async throws {
        try await withServer { session, app in
            let verbs: [(String, HTTPRequest.Method, String)] = [
                ("/v1/resize", .post, #"{"size":"320x180"}"#), ("/v1/pause", .post, ""), ("/v1/play", .post, ""),
                ("/v1/skip", .post, ""), ("/v1/widgets/memo", .patch, #"{"text":"x"}"#),
                ("/v1/outputs", .post, #"{"push":"rtmp://a/b/c"}"#), ("/v1/outputs?id=x", .delete, ""),
                ("/v1/frame.png", .get, ""), ("/metrics", .get, ""), ("/v1/status", .get, ""),
                ("/v1/web/lower", .post, #"{"call":"play"}"#), ("/v1/whep/viewer1/window", .post, #"{"width":320,"height":180}"#),
            ]
            try await app.test(.router) { client in
                for (uri, method, body) in verbs {
                    try await client.execute(uri: uri, method: method,
                                             headers: ControlServerTests.owner(method, [.origin: "http://evil.example"]),
                                             body: ByteBuffer(string: body)) { r in #expect(r.status == .forbidden, "\(uri)") }
                    if [.post, .patch].contains(method) {
                        try await client.execute(uri: uri, method: method,
                                                 headers: ControlServerTests.owner(method, [.contentType: "text/plain"]),
                                                 body: ByteBuffer(string: body)) { r in
                            #expect(r.status == .unsupportedMediaType, "\(uri)")
                        }
                    }
                }
            }
            #expect(session.calls.isEmpty, "\(session.calls)")
        }
    }

    /// Every answer carries the headers that keep other pages from framing or reading it; CORS only for an allowed
    /// origin.
    @Test func answersCarryProtectionAndCORSOnlyForAllowedOrigins() async throws {
        try await withServer { _, app in
            try await app.test(.router) { client in
                for headers in [ControlServerTests.owner(.get), [:]] {
                    try await client.execute(uri: "/v1/status", method: .get, headers: headers) { r in
                        #expect(r.headers[.crossOriginResourcePolicy] == "same-origin")
                        #expect(r.headers[.contentSecurityPolicy] == "frame-ancestors 'none'")
                        #expect(r.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer")
                        #expect(r.headers[.accessControlAllowOrigin] == nil)
                    }
                }
                try await client.execute(uri: "/v1/status", method: .options,
                                         headers: [.origin: "http://evil.example"]) { r in #expect(r.status == .forbidden) }
            }
        }
    }

}
