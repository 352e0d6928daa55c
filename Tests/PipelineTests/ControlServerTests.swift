import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import Testing
import TestSupport
@testable import Compositor

/// The control API in this process: Hummingbird's router test client against a running session that records
/// to a temporary folder (no network, no child process).
@Suite(.serialized) struct ControlServerTests {
    /// A started session recording a small picture, and its router; stopped after `body`.
    func withSession(token: String? = ControlServerTests.token,
                     _ body: (LiveSession, Application<RouterResponder<ControlContext>>, TempDir) async throws -> Void)
        async throws {
        let dir = try TempDir()
        let scene = try SceneLoader.load(path: examples + "/info-panel.yaml")
        let options = LiveOptions(scene: scene, size: PixelSize(width: 160, height: 90), fps: 30,
                                  outputs: [try OutputSpec.record(dir.file("base.ts"), policy: .fit)])
        let session = LiveSession(options: options, log: { _ in })
        try session.start()
        defer { session.stop() }
        let access = ControlAccess(token: token, hosts: ControlAccess.hosts(listeningOn: "127.0.0.1", extra: []))
        let server = try ControlServer(session: session, host: "127.0.0.1", port: 0, access: access,
                                       place: RecordingPlace(folders: [dir.path]))
        try await body(session, Application(router: server.makeRouter()), dir)
    }

    static let token = "t0ken"

    /// What the owner's client sends besides the body: the token, and JSON's content type on a request that has one.
    static func owner(_ method: HTTPRequest.Method = .get, _ extra: HTTPFields = [:]) -> HTTPFields {
        var h: HTTPFields = [.authorization: "Bearer \(token)"]
        if [.post, .patch, .put].contains(method) { h[.contentType] = "application/json" }
        for f in extra { h[f.name] = f.value }
        return h
    }

    func json(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [String: Any] ?? [:]
    }

    @Test func statusResizeAndRefusalsAnswerWithTheirStatusAndMessage() async throws {
        try await withSession { session, app, _ in
            try await app.test(.router) { client in
                try await client.execute(uri: "/v1/status", method: .get, headers: Self.owner(.get)) { r in
                    #expect(r.status == .ok)
                    #expect(self.json(r.body)["width"] as? Int == 160)
                }
                try await client.execute(uri: "/v1/resize", method: .post, headers: Self.owner(.post), body: ByteBuffer(string: #"{"size":"3x2"}"#)) { r in
                    #expect(r.status == .badRequest)
                    #expect(String(buffer: r.body).contains("3x2"))
                }
                try await client.execute(uri: "/v1/widgets/memo", method: .patch, headers: Self.owner(.patch), body: ByteBuffer(string: #"{"txt":"x"}"#)) { r in
                    #expect(r.status == .badRequest)
                    #expect(String(buffer: r.body).contains("it takes: items, text"))
                }
                try await client.execute(uri: "/v1/widgets/memo", method: .patch, headers: Self.owner(.patch), body: ByteBuffer(string: "{not json")) { r in
                    #expect(r.status == .badRequest)
                }
                try await client.execute(uri: "/v1/resize", method: .post, headers: Self.owner(.post)) { r in
                    #expect(r.status == .badRequest)
                    #expect(String(buffer: r.body).contains("the body is empty: this route takes a JSON object"), "\(String(buffer: r.body))")
                }
                // A path no route takes: 404 with what was asked and where the routes are (it had no body at all).
                try await client.execute(uri: "/v1/widgets/memo/text", method: .post, headers: Self.owner(.post), body: ByteBuffer(string: "{}")) { r in
                    #expect(r.status == .notFound)
                    let answer = try JSONSerialization.jsonObject(with: Data(String(buffer: r.body).utf8)) as? [String: [String: String]]
                    #expect(answer?["error"]?["message"]?.hasPrefix("no route for POST /v1/widgets/memo/text: ") == true, "\(String(buffer: r.body))")
                }
                try await client.execute(uri: "/v1/skip", method: .post, headers: Self.owner(.post)) { r in
                    #expect(r.status == .conflict, "a live scene cannot skip")
                }
                try await client.execute(uri: "/v1/outputs?id=record:/nowhere.mp4", method: .delete, headers: Self.owner(.delete)) { r in
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
                try await client.execute(uri: "/v1/outputs", method: .post, headers: Self.owner(.post), body: ByteBuffer(string: #"{"record":"\#(file)"}"#)) { r in
                    #expect(r.status == .ok)
                    #expect(self.json(r.body)["started"] as? String == "record:\(file)")
                }
                try await client.execute(uri: "/v1/outputs", method: .post, headers: Self.owner(.post), body: ByteBuffer(string: #"{"record":"\#(file)"}"#)) { r in
                    #expect(r.status == .forbidden, "the file exists now")
                }
                try await client.execute(uri: "/v1/outputs", method: .post, headers: Self.owner(.post),
                                         body: ByteBuffer(string: #"{"record":"\#(file)","overwrite":true}"#)) { r in
                    #expect(r.status == .conflict, "the same file twice")
                }
                // A second of frames in the file before it is stopped.
                #expect(try await pollAsync(until: {
                    session.status.outputs.first { $0.id == "record:\(file)" }.map { $0.delivered >= 30 } ?? false
                }, timeout: 20, every: 0.05))
                try await client.execute(uri: "/v1/outputs?id=record:\(file)", method: .delete, headers: Self.owner(.delete)) { r in
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

    /// What a page elsewhere can send without a preflight, and a body not declared JSON: refused, and nothing
    /// changes (no file, the same size).
    @Test func refusedRequestsChangeNothing() async throws {
        try await withSession { session, app, dir in
            let file = dir.file("precious.mp4")
            let body = ByteBuffer(string: #"{"record":"\#(file)"}"#)
            try await app.test(.router) { client in
                try await client.execute(uri: "/v1/outputs", method: .post, headers: [.contentType: "text/plain"],
                                         body: body) { r in #expect(r.status == .unauthorized) }
                try await client.execute(uri: "/v1/outputs", method: .post,
                                         headers: Self.owner(.post, [.origin: "http://evil.example"]), body: body) { r in
                    #expect(r.status == .forbidden)
                    #expect(String(buffer: r.body).contains("--allow-origin"))
                }
                try await client.execute(uri: "/v1/outputs", method: .post,
                                         headers: Self.owner(.post, [.contentType: "text/plain"]), body: body) { r in
                    #expect(r.status == .unsupportedMediaType)
                }
                try await client.execute(uri: "/v1/resize", method: .post,
                                         headers: Self.owner(.post, [.contentType: "text/plain"]),
                                         body: ByteBuffer(string: #"{"size":"320x180"}"#)) { r in
                    #expect(r.status == .unsupportedMediaType)
                }
                try await client.execute(uri: "/v1/frame.png", method: .get,
                                         headers: Self.owner(.get, [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])) { r in
                    #expect(r.status == .forbidden)
                    #expect(r.headers[.contentType] != "image/png")
                }
            }
            #expect(!FileManager.default.fileExists(atPath: file))
            #expect(session.status.size == PixelSize(width: 160, height: 90))
            #expect(session.status.outputs.count == 1)
        }
    }

    /// The API records inside its folder only, and over an existing file only when asked.
    @Test func recordingsStartedOverTheAPIKeepToTheirFolder() async throws {
        try await withSession { session, app, dir in
            let outside = try TempDir()
            let existing = try dir.write("existing.mp4", "precious")
            #expect(symlink(outside.file("victim.mkv"), dir.file("link.mkv")) == 0)
            #expect(symlink("/dev/full", dir.file("full.ts")) == 0)
            let refused: [(String, String)] = [
                (#"{"record":"\#(existing)"}"#, "exists"),
                (#"{"record":"\#(outside.file("x.mp4"))"}"#, "outside"),
                (#"{"record":"\#(dir.path)/../x.mp4"}"#, "'..'"),
                (#"{"record":"\#(dir.file("link.mkv"))","overwrite":true}"#, "leads out"),
                (#"{"record":"\#(dir.file("full.ts"))","overwrite":true}"#, "leads out"),
            ]
            try await app.test(.router) { client in
                for (body, why) in refused {
                    try await client.execute(uri: "/v1/outputs", method: .post, headers: Self.owner(.post),
                                             body: ByteBuffer(string: body)) { r in
                        #expect(r.status == .forbidden, "\(body)")
                        #expect(String(buffer: r.body).contains(why), "\(String(buffer: r.body))")
                    }
                }
                try await client.execute(uri: "/v1/outputs", method: .post, headers: Self.owner(.post),
                                         body: ByteBuffer(string: #"{"record":"\#(existing)","overwrite":"yes"}"#)) { r in
                    #expect(r.status == .badRequest)
                }
                try await client.execute(uri: "/v1/outputs", method: .post, headers: Self.owner(.post),
                                         body: ByteBuffer(string: #"{"record":"\#(existing)","overwrite":true}"#)) { r in
                    #expect(r.status == .ok)
                }
            }
            #expect(try String(contentsOfFile: existing, encoding: .utf8) != "precious")
            #expect(!FileManager.default.fileExists(atPath: outside.file("victim.mkv")))
            #expect(!FileManager.default.fileExists(atPath: outside.file("x.mp4")))
            #expect(try await pollAsync(until: {
                session.status.outputs.first { $0.id == "record:\(existing)" }.map { $0.delivered >= 10 } ?? false
            }, timeout: 20, every: 0.05))
        }
    }

    /// A body field of another type is refused in its route's words (null too), or read as absent where the route
    /// reads it so; a value no route reads must still be JSON the API can hold, and a field no route reads is refused
    /// by name. Refusals reach nothing.
    @Test func bodyFieldsOfAnotherTypeAnswerInTheirRoutesWords() async throws {
        let session = CountingSession()
        let access = ControlAccess(token: Self.token, hosts: ControlAccess.hosts(listeningOn: "127.0.0.1", extra: []))
        let server = try ControlServer(session: session, host: "127.0.0.1", port: 0, access: access)
        let refused: [(String, String, String)] = [
            ("/v1/skip", #"{"track":null}"#, #"'track' must be "next" or "previous""#),
            ("/v1/skip", #"{"seconds":"5"}"#, "'seconds' must be a number, got a string"),
            ("/v1/skip", #"{"seconds":null}"#, "'seconds' must be a number, got null"),
            ("/v1/outputs", #"{"push":"rtmp://a/b/c","rendition":null}"#,
             #"'rendition' is a size like "416x234", one of the run's --rendition"#),
            ("/v1/outputs", #"{"record":5}"#, #"expected {"record": "FILE"} or {"push": "URL"}"#),
            ("/v1/web/lower", #"{"call":"update","data":5}"#, "'data' must be JSON (an object or a string)"),
            ("/v1/whep/viewer1/window", "[]", "expected a JSON object"),
            ("/v1/resize", #"{"size":"320x180","x":1e999}"#, "expected a JSON object"),
            // A field no route reads is refused by name, never left unread as if it had not been sent.
            ("/v1/resize", #"{"size":"320x180","fps":60}"#, "POST /v1/resize has no field 'fps'; it takes: size, width, height"),
            ("/v1/outputs", #"{"record":"/tmp/x.mp4","overwite":true}"#,
             "POST /v1/outputs has no field 'overwite' (did you mean 'overwrite'?); it takes: record, push, resize, overwrite, rendition"),
            ("/v1/whep/viewer1/window", #"{"width":320,"heigth":180}"#,
             "POST /v1/whep/viewer1/window has no field 'heigth' (did you mean 'height'?); it takes: width, height, main"),
            ("/v1/links", #"{"label":"tv","expiry":"2h"}"#,
             "POST /v1/links has no field 'expiry' (did you mean 'expires'?); it takes: label, expires"),
            // The web call and the snapshot share a body type, not their fields.
            ("/v1/web/lower", #"{"call":"play","size":"320x180"}"#, "POST /v1/web/lower has no field 'size'; it takes: call, data, name, at"),
            ("/v1/web/lower/snapshot", #"{"data":{},"call":"update"}"#,
             "POST /v1/web/lower/snapshot has no field 'call'; it takes: data, size"),
        ]
        let accepted = [("/v1/resize", #"{"size":5,"width":320,"height":180}"#),
                        ("/v1/web/lower", #"{"call":"play","name":5}"#)]
        try await Application(router: server.makeRouter()).test(.router) { client in
            for (uri, body, message) in refused {
                try await client.execute(uri: uri, method: .post, headers: Self.owner(.post),
                                         body: ByteBuffer(string: body)) { r in
                    #expect(r.status == .badRequest, "\(uri) \(body)")
                    #expect((self.json(r.body)["error"] as? [String: Any])?["message"] as? String == message, "\(body)")
                }
            }
            #expect(session.calls.isEmpty, "\(session.calls)")
            for (uri, body) in accepted {
                try await client.execute(uri: uri, method: .post, headers: Self.owner(.post),
                                         body: ByteBuffer(string: body)) { r in
                    #expect(r.status == .ok, "\(uri) \(body)")
                }
            }
        }
        #expect(session.calls == ["resize", "webCall"])
    }

    @Test func theExposureRuleRefusesOtherAddressesWithoutAToken() throws {
        #expect(throws: ControlError.self) { try ControlServer.checkExposure(host: "0.0.0.0", token: nil) }
        #expect(throws: ControlError.self) { try ControlServer.checkExposure(host: "192.168.1.2", token: "") }
        try ControlServer.checkExposure(host: "0.0.0.0", token: "t")
        try ControlServer.checkExposure(host: "127.0.0.1", token: nil)
        try ControlServer.checkExposure(host: "::1", token: nil)
    }
}
