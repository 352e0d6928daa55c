import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The HTTP/JSON control API of a running session (Hummingbird). Loopback by default, with a token by default;
/// every request passes `ControlAccess` (Host, Origin, token, content type) before its route. Every refusal is a
/// 4xx with `{"error": {"message": …}}` naming the problem, and no request can stop the stream. See
/// docs/openapi.yaml.
///
/// `@unchecked Sendable`: `boundPort` is written by `start()`, before any request; request handlers read only
/// `session`, `access` and `place`, set in `init`.
public final class ControlServer: @unchecked Sendable {
    public let session: any ControlledSession
    public let host: String
    public let port: Int
    public let access: ControlAccess
    /// Where recordings started over the API may write.
    public let place: RecordingPlace
    public private(set) var boundPort = 0
    private let service = HTTPService()

    /// Bodies larger than this are refused (413).
    public static let maxBody = 1 << 20

    public init(session: any ControlledSession, host: String, port: Int, access: ControlAccess,
                place: RecordingPlace = RecordingPlace(folders: [FileManager.default.currentDirectoryPath]))
        throws(ControlError) {
        try Self.checkExposure(host: host, token: access.token)
        self.session = session
        self.host = host
        self.port = port
        self.access = access
        self.place = place
    }

    public var token: String? { access.token }

    /// Whether `host` is a loopback address or name.
    public static func isLoopback(_ host: String) -> Bool { ControlAccess.isLoopback(ControlAccess.normalHost(host)) }

    /// The rule for who may reach the API: off loopback, only with a token.
    public static func checkExposure(host: String, token: String?) throws(ControlError) {
        if !isLoopback(host) && (token ?? "").isEmpty {
            throw .bad("the control API on \(host) is reachable from other machines: it needs a token (drop "
                       + "--no-control-token, or give --control-token TOKEN or PIPCOMPOSE_CONTROL_TOKEN)")
        }
    }

    /// Parses `[HOST:]PORT`.
    public static func parseAddress(_ text: String, option: String = "--control") throws(ControlError) -> (String, Int) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let host = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
        guard parts.count <= 2, let port = Int(parts.last ?? ""), (0...65535).contains(port) else {
            throw .bad("invalid \(option) '\(text)': expected [HOST:]PORT, e.g. 8555 or 127.0.0.1:8555")
        }
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }

    /// Binds and serves; throws when the port cannot be had.
    public func start() throws {
        do { try service.start(makeRouter(), host: host, port: port, label: "pipcompose.control") } catch {
            throw ControlError(500, "cannot serve the control API on \(host):\(port): \(error); choose another "
                               + "port with --control PORT (another pipcompose?)")
        }
        boundPort = service.port
    }

    public var url: String { "http://\(host.contains(":") ? "[\(host)]" : host):\(boundPort)" }

    /// The page's address with the token, as the browser should open it (what `run` prints).
    public var pageURL: String { Self.pageURL(base: url, token: access.token) }

    public static func pageURL(base: String, token: String?) -> String {
        guard let token else { return base + "/" }
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&+=#")
        return base + "/?token=" + (token.addingPercentEncoding(withAllowedCharacters: allowed) ?? token)
    }

    /// Ends the event streams, then shuts the server down gracefully.
    public func stop() {
        session.events.finish()
        service.stop()
    }

    // MARK: - Routes

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        // First, so that it guards every route added below, unknown paths and preflights too.
        router.add(middleware: AccessMiddleware(access: access, refusals: RefusalLog(log: session.log)))
        let session = self.session
        router.get("/v1/status") { _, _ in try Self.json(session.statusPayload()) }
        router.post("/v1/resize") { request, _ in
            let body = try await Self.body(request)
            let size: PixelSize
            if case .string(let s)? = body["size"] {
                do { size = try RenderSize.parse(s) } catch { throw HTTPError(.badRequest, message: "\(error)") }
            } else if let s = try Self.widthAndHeight(body) {
                size = s
            } else {
                throw HTTPError(.badRequest, message: "expected {\"size\": \"WxH\"} or {\"width\": W, \"height\": H}")
            }
            session.resize(to: size)
            return try Self.json(["requested": size.description])
        }
        router.post("/v1/pause") { _, _ in
            session.pause()
            return try Self.json(["state": "paused"])
        }
        router.post("/v1/play") { _, _ in
            session.play()
            return try Self.json(["state": "playing"])
        }
        router.post("/v1/skip") { request, _ in
            let body = try await Self.body(request, allowEmpty: true)
            let skipped: SkipOutcome
            if let v = body["track"] {
                guard case .string(let which) = v, which == "next" || which == "previous" else {
                    throw HTTPError(.badRequest, message: "'track' must be \"next\" or \"previous\"")
                }
                do { skipped = try session.skipTrack(forward: which == "next") } catch { throw Self.http(error) }
            } else {
                var seconds = 15.0
                if let v = body["seconds"] {
                    guard case .number(let n) = v, n.isFinite else {
                        throw HTTPError(.badRequest, message: "'seconds' must be a number, got \(v.kind)")
                    }
                    seconds = n
                }
                do { skipped = try session.skip(by: seconds) } catch { throw Self.http(error) }
            }
            return try Self.json(SkipAnswer(media: skipped.media, track: skipped.track?.index, file: skipped.track?.file,
                                            position: skipped.track?.position))
        }
        router.patch("/v1/widgets/:id") { request, context in
            let id = context.parameters.get("id") ?? ""
            let body = try await Self.body(request)
            do { try session.updateWidget(id: id, properties: body) } catch { throw Self.http(error) }
            return try Self.json(["updated": id])
        }
        let place = self.place
        router.post("/v1/outputs") { request, _ in
            let body = try await Self.body(request)
            let spec: OutputSpec
            var claimed: String?
            do {
                if case .string(let path)? = body["record"] {
                    var policy = OutputSpec.ResizePolicy.fit
                    if case .string(let p)? = body["resize"] {
                        guard let r = OutputSpec.ResizePolicy(rawValue: p) else {
                            throw HTTPError(.badRequest, message: "'resize' must be fit or split")
                        }
                        policy = r
                    }
                    var overwrite = false
                    if let v = body["overwrite"] {
                        guard case .bool(let b) = v else {
                            throw HTTPError(.badRequest, message: "'overwrite' must be true or false")
                        }
                        overwrite = b
                    }
                    _ = try OutputSpec.record(path, policy: policy)
                    let target: String
                    do { target = try place.check(path, overwrite: overwrite) } catch let e as RecordingPlace.Refusal {
                        throw HTTPError(.forbidden, message: e.description)
                    }
                    if !overwrite { claimed = target }
                    spec = try OutputSpec.record(target, policy: policy)
                } else if case .string(let url)? = body["push"] {
                    spec = try OutputSpec.push(url)
                } else {
                    throw HTTPError(.badRequest, message: "expected {\"record\": \"FILE\"} or {\"push\": \"URL\"}")
                }
            } catch let e as OutputSpec.Invalid {
                throw HTTPError(.unprocessableContent, message: e.description)
            }
            var rendition: PixelSize?
            if let v = body["rendition"] {
                guard case .string(let text) = v, let size = try? RenderSize.parse(text) else {
                    if let claimed { RecordingPlace.release(claimed) }
                    throw HTTPError(.badRequest, message: "'rendition' is a size like \"416x234\", one of the run's --rendition")
                }
                rendition = size
            }
            do { return try Self.json(["started": try session.startOutput(spec, rendition: rendition)]) } catch {
                // The empty file made to hold the name goes when the recording does not start.
                if let claimed { RecordingPlace.release(claimed) }
                throw Self.http(error)
            }
        }
        router.delete("/v1/outputs") { request, _ in
            guard let id = request.uri.queryParameters.get("id") else {
                throw HTTPError(.badRequest, message: "give the output as ?id=… (see status)")
            }
            // The output leaves now; finalizing its file takes up to 10 s and is reported by `didStop`.
            do { try session.stopOutput(id: id) } catch { throw Self.http(error) }
            return try Self.json(["stopping": id], status: .accepted)
        }
        router.post("/v1/web/:id") { request, context in
            let id = context.parameters.get("id") ?? ""
            let body = try await Self.body(request)
            guard case .string(let call)? = body["call"] else {
                throw HTTPError(.badRequest, message: "expected {\"call\": \"update\", \"data\": …}; calls: update, play, "
                                + "next, stop, remove, reload, invoke (with \"name\")")
            }
            var data: String?
            switch body["data"] {
            case .string(let s)?: data = s
            case .object, .array:
                data = (try? JSONEncoder().encode(body["data"]!)).map { String(decoding: $0, as: UTF8.self) }
            case nil, .null?: data = nil
            default: throw HTTPError(.badRequest, message: "'data' must be JSON (an object or a string)")
            }
            var name: String?
            if case .string(let n)? = body["name"] { name = n }
            do { return try Self.json(["result": try await session.webCall(id: id, call: call, data: data, name: name)]) } catch {
                throw Self.http(error)
            }
        }
        router.get("/v1/frame.png") { request, _ in
            var size: PixelSize?
            if let s = request.uri.queryParameters.get("size") {
                do { size = try RenderSize.parse(s) } catch { throw HTTPError(.badRequest, message: "\(error)") }
            }
            let png = try await session.framePNG(size: size)
            return Response(status: .ok, headers: [.contentType: "image/png"],
                            body: .init(byteBuffer: ByteBuffer(bytes: png)))
        }
        router.get("/metrics") { _, _ in
            let text = session.metricsText()
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                            body: .init(byteBuffer: ByteBuffer(string: text)))
        }
        router.get("/v1/events") { _, _ in
            let stream = session.events.subscribe()
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                            body: .init { writer in
                                try await writer.write(ByteBuffer(string: ": pipcompose events\n\n"))
                                for await event in stream {
                                    let data = String(decoding: try encoder.encode(event), as: UTF8.self)
                                    try await writer.write(ByteBuffer(string: "event: \(event.type)\ndata: \(data)\n\n"))
                                }
                                try await writer.finish(nil)
                            })
        }
        addWebRTCRoutes(to: router)
        addHLSRoutes(to: router)
        return router
    }

    /// The HLS ladder's folder (`--hls`) for players: `/hls/TOKEN/master.m3u8` (`/hls/master.m3u8` without a token),
    /// its media playlists and segments, nothing else.
    func addHLSRoutes(to router: Router<BasicRequestContext>) {
        let session = self.session, token = access.token
        router.get("/hls/**") { _, context in
            guard let folder = session.hlsFolder else {
                throw HTTPError(.notFound, message: "no HLS ladder here: start with run --hls DIR")
            }
            var parts = context.parameters.getCatchAll().map { $0.removingPercentEncoding ?? String($0) }
            // The access check matched the token in the path already.
            if token != nil { parts = Array(parts.dropFirst()) }
            let relative = parts.joined(separator: "/")
            let real = realpath(folder, nil).map { p -> String in
                defer { free(p) }
                return String(cString: p)
            }
            guard let type = HLSPlaylist.contentType(of: relative), let real,
                  let path = FolderFile.resolve(relative, below: real),
                  let data = FileManager.default.contents(atPath: path) else {
                throw HTTPError(.notFound, message: "no '\(relative)' in the HLS folder (it has master.m3u8, a playlist "
                                + "per rung and their segments; a segment past --hls-window is gone)")
            }
            // Playlists change every segment; a segment never does.
            let cache = type.hasSuffix("mpegurl") ? "no-cache" : "max-age=60"
            return Response(status: .ok, headers: [.contentType: type, .cacheControl: cache],
                            body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
    }

    /// WHEP (`POST /v1/whep` with an SDP offer → 201, the answer and its `Location`; `DELETE` there ends it) and
    /// the page at `/` that plays it.
    func addWebRTCRoutes(to router: Router<BasicRequestContext>) {
        let session = self.session
        router.get("/") { _, _ in
            guard session.whep != nil else {
                throw HTTPError(.notFound, message: "the live page needs WebRTC: start with run --webrtc")
            }
            do {
                let page = try WebPage.load()
                return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
                                body: .init(byteBuffer: ByteBuffer(bytes: page)))
            } catch { throw HTTPError(.notFound, message: "\(error)") }
        }
        router.post("/v1/whep") { request, _ in
            guard let webrtc = session.whep else {
                throw HTTPError(.notFound, message: "WebRTC is off: start with run --webrtc")
            }
            let type = request.headers[.contentType]?.lowercased() ?? ""
            guard type.hasPrefix("application/sdp") else {
                throw HTTPError(.unsupportedMediaType,
                                message: "send the SDP offer with Content-Type: application/sdp (got '\(type)')")
            }
            let buffer: ByteBuffer
            do { buffer = try await request.body.collect(upTo: 64 << 10) } catch {
                throw HTTPError(.contentTooLarge, message: "an SDP offer is at most 64 KB")
            }
            do {
                let (id, sdp) = try await webrtc.answer(offer: String(decoding: buffer.readableBytesView, as: UTF8.self))
                return Response(status: .created, headers: [.contentType: "application/sdp", .location: "/v1/whep/\(id)"],
                                body: .init(byteBuffer: ByteBuffer(string: sdp)))
            } catch let e as WebRTCOutput.Failure {
                switch e {
                case .badOffer: throw HTTPError(.badRequest, message: e.description)
                case .full: throw HTTPError(.serviceUnavailable, headers: [.retryAfter: "10"], message: e.description)
                case .stopping: throw HTTPError(.serviceUnavailable, message: e.description)
                case .unknown: throw HTTPError(.notFound, message: e.description)
                case .failed: throw HTTPError(.internalServerError, message: e.description)
                }
            }
        }
        router.delete("/v1/whep/:id") { _, context in
            guard let webrtc = session.whep else {
                throw HTTPError(.notFound, message: "WebRTC is off: start with run --webrtc")
            }
            let id = context.parameters.get("id") ?? ""
            do { try await webrtc.end(id) } catch { throw HTTPError(.notFound, message: "\(error)") }
            return try Self.json(["ended": id])
        }
        // The window a viewer's picture is for: its own rendition (or the main picture with {"main": true}).
        router.post("/v1/whep/:id/window") { request, context in
            let id = context.parameters.get("id") ?? ""
            let body = try await Self.body(request)
            guard session.whep != nil else {
                throw HTTPError(.notFound, message: "WebRTC is off: start with run --webrtc")
            }
            let window: PixelSize?
            if case .bool(true)? = body["main"] {
                window = nil
            } else if let s = try Self.widthAndHeight(body) {
                window = s
            } else {
                throw HTTPError(.badRequest, message: "expected {\"width\": W, \"height\": H} (the window in device pixels) "
                                + "or {\"main\": true} (the main picture)")
            }
            do { return try Self.json(try session.follow(viewer: id, window: window)) } catch { throw Self.http(error) }
        }
        router.patch("/v1/whep/:id") { _, _ -> Response in
            throw HTTPError(.methodNotAllowed, message: "no trickle ICE: the answer already carries every candidate")
        }
    }

    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    /// `{"width": W, "height": H}` as a checked picture size; nil when the body has neither.
    static func widthAndHeight(_ body: [String: JSONValue]) throws -> PixelSize? {
        guard case .number(let w)? = body["width"], case .number(let h)? = body["height"] else { return nil }
        guard w.isFinite, h.isFinite, abs(w) < 1e6, abs(h) < 1e6 else {
            throw HTTPError(.badRequest, message: "width and height must be whole numbers of pixels")
        }
        do { return try RenderSize.check(PixelSize(width: Int(w), height: Int(h))) } catch {
            throw HTTPError(.badRequest, message: "\(error)")
        }
    }

    /// A JSON object body of at most 1 MB.
    static func body(_ request: Request, allowEmpty: Bool = false) async throws -> [String: JSONValue] {
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: maxBody) } catch {
            throw HTTPError(.contentTooLarge, message: "the body is larger than 1 MB")
        }
        if buffer.readableBytes == 0 && allowEmpty { return [:] }
        do {
            return try JSONDecoder().decode([String: JSONValue].self, from: Data(buffer.readableBytesView))
        } catch DecodingError.typeMismatch {
            throw HTTPError(.badRequest, message: "expected a JSON object")
        } catch {
            throw HTTPError(.badRequest, message: "malformed JSON: \(describe(error))")
        }
    }

    static func describe(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let c) = error {
            return (c.underlyingError.map { "\($0)" } ?? c.debugDescription)
        }
        return "\(error)"
    }

    static func http(_ error: any Error) -> HTTPError {
        if let e = error as? ControlError {
            return HTTPError(HTTPResponse.Status(code: e.status), message: e.message)
        }
        return HTTPError(.internalServerError, message: "\(error)")
    }
}

/// The answer to `POST /v1/skip`: the scene time it went to (finite scenes), and the music's file and position.
struct SkipAnswer: Encodable {
    var media: Double?
    var track: Int?
    var file: String?
    var position: Double?
}
