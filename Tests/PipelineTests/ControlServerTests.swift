import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import TestSupport
@testable import Compositor

/// The control API in this process: Hummingbird's router test client against a running session that records
/// to a temporary folder (no network, no child process).
@Suite(.serialized) struct ControlServerTests {
    /// A started session recording a small picture, and its router; stopped after `body`.
    func withSession(token: String? = nil, _ body: (LiveSession, Application<RouterResponder<BasicRequestContext>>, TempDir) async throws -> Void) async throws {
        let dir = try TempDir()
        let scene = try SceneLoader.load(path: examples + "/info-panel.yaml")
        let options = LiveOptions(scene: scene, size: PixelSize(width: 160, height: 90), fps: 30,
                                  outputs: [try OutputSpec.record(dir.file("base.ts"), policy: .fit)])
        let session = LiveSession(options: options, log: { _ in })
        try session.start()
        defer { session.stop() }
        let server = try ControlServer(session: session, host: "127.0.0.1", port: 0, token: token)
        try await body(session, Application(router: server.makeRouter()), dir)
    }

    /// Checks `condition` every 50 ms until it holds (true) or `timeout` passes (false).
    func waitFor(timeout: Double, _ condition: () -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    func json(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [String: Any] ?? [:]
    }

    @Test func statusResizeAndRefusalsAnswerWithTheirStatusAndMessage() async throws {
        try await withSession { session, app, _ in
            try await app.test(.router) { client in
                try await client.execute(uri: "/v1/status", method: .get) { r in
                    #expect(r.status == .ok)
                    #expect(self.json(r.body)["width"] as? Int == 160)
                }
                try await client.execute(uri: "/v1/resize", method: .post, body: ByteBuffer(string: #"{"size":"3x2"}"#)) { r in
                    #expect(r.status == .badRequest)
                    #expect(String(buffer: r.body).contains("3x2"))
                }
                try await client.execute(uri: "/v1/widgets/memo", method: .patch, body: ByteBuffer(string: #"{"txt":"x"}"#)) { r in
                    #expect(r.status == .badRequest)
                    #expect(String(buffer: r.body).contains("it takes: items, text"))
                }
                try await client.execute(uri: "/v1/widgets/memo", method: .patch, body: ByteBuffer(string: "{not json")) { r in
                    #expect(r.status == .badRequest)
                }
                try await client.execute(uri: "/v1/skip", method: .post) { r in
                    #expect(r.status == .conflict, "a live scene cannot skip")
                }
                try await client.execute(uri: "/v1/outputs?id=record:/nowhere.mp4", method: .delete) { r in
                    #expect(r.status == .notFound)
                    #expect(String(buffer: r.body).contains("base.ts"), "names the running outputs")
                }
            }
        }
    }

    /// Stopping an output answers at once (202); the file is finalized in the background and `didStop` says so.
    @Test func anOutputStartedAndStoppedAtRunTimeEndsWithDidStop() async throws {
        try await withSession { session, app, dir in
            let events = session.events.subscribe()
            let file = dir.file("runtime.mp4")
            try await app.test(.router) { client in
                try await client.execute(uri: "/v1/outputs", method: .post, body: ByteBuffer(string: #"{"record":"\#(file)"}"#)) { r in
                    #expect(r.status == .ok)
                    #expect(self.json(r.body)["started"] as? String == "record:\(file)")
                }
                try await client.execute(uri: "/v1/outputs", method: .post, body: ByteBuffer(string: #"{"record":"\#(file)"}"#)) { r in
                    #expect(r.status == .conflict, "the same file twice")
                }
                // A second of frames in the file before it is stopped.
                #expect(try await self.waitFor(timeout: 20) {
                    session.status.outputs.first { $0.id == "record:\(file)" }.map { $0.delivered >= 30 } ?? false
                })
                try await client.execute(uri: "/v1/outputs?id=record:\(file)", method: .delete) { r in
                    #expect(r.status == .accepted)
                }
            }
            var finalized: String?
            for await e in events where e.type == "didStop" {
                finalized = e.details["finalized"]
                break
            }
            #expect(finalized == "true")
            let probe = try runTool(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,width,height",
                                     "-of", "csv=p=0", file])
            #expect(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,160,90", "\(probe.stderr)")
        }
    }

    @Test func aTokenIsRequiredWhenOneIsSet() async throws {
        try await withSession(token: "s3cret") { _, app, _ in
            try await app.test(.router) { client in
                try await client.execute(uri: "/v1/status", method: .get) { r in #expect(r.status == .unauthorized) }
                try await client.execute(uri: "/v1/status", method: .get, headers: [.authorization: "Bearer wrong"]) { r in
                    #expect(r.status == .unauthorized)
                }
                try await client.execute(uri: "/v1/status", method: .get, headers: [.authorization: "Bearer s3cret"]) { r in
                    #expect(r.status == .ok)
                }
            }
        }
    }

    @Test func theExposureRuleRefusesOtherAddressesWithoutAToken() throws {
        #expect(throws: ControlError.self) { try ControlServer.checkExposure(host: "0.0.0.0", token: nil) }
        #expect(throws: ControlError.self) { try ControlServer.checkExposure(host: "192.168.1.2", token: "") }
        try ControlServer.checkExposure(host: "0.0.0.0", token: "t")
        try ControlServer.checkExposure(host: "127.0.0.1", token: nil)
        try ControlServer.checkExposure(host: "::1", token: nil)
    }
}
