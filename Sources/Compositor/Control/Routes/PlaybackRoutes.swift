import Foundation
import Hummingbird

/// The PiP controller's verbs: the picture's size, pause and play, skips.
struct PlaybackRoutes {
    let session: any ControlledSession

    var routes: RouteCollection<ControlContext> {
        let routes = RouteCollection(context: ControlContext.self)
        routes.post("/v1/resize") { request, _ in
            let size = try await request.jsonBody(as: ResizeBody.self).requestedSize()
            session.resize(to: size)
            return try Response.json(["requested": size.description])
        }
        routes.post("/v1/pause") { _, _ in
            session.pause()
            return try Response.json(["state": "paused"])
        }
        routes.post("/v1/play") { _, _ in
            session.play()
            return try Response.json(["state": "playing"])
        }
        routes.post("/v1/skip") { request, _ in try await skip(request) }
        return routes
    }

    func skip(_ request: Request) async throws -> Response {
        let move = try await request.jsonBody(as: SkipBody.self, allowEmpty: true).move()
        let skipped: SkipOutcome
        do {
            switch move {
            case .track(let forward): skipped = try session.skipTrack(forward: forward)
            case .seconds(let seconds): skipped = try session.skip(by: seconds)
            }
        } catch { throw HTTPError.answering(error) }
        return try .json(SkipAnswer(media: skipped.media, track: skipped.track?.index, file: skipped.track?.file,
                                    position: skipped.track?.position))
    }
}

/// `POST /v1/resize`: `{"size": "WxH"}` or `{"width": W, "height": H}` (a field of another type counts as absent).
struct ResizeBody: Decodable, KnownFields {
    static let fields = ["size", "width", "height"]
    var size: Sent<String>
    var width: Sent<Double>
    var height: Sent<Double>

    /// The size asked for, checked.
    func requestedSize() throws -> PixelSize {
        if let text = size.value {
            do { return try RenderSize.parse(text) } catch { throw HTTPError(.badRequest, message: "\(error)") }
        }
        guard let size = try PixelSize.requested(width: width, height: height) else {
            throw HTTPError(.badRequest, message: "expected {\"size\": \"WxH\"} or {\"width\": W, \"height\": H}")
        }
        return size
    }
}

/// `POST /v1/skip`: `{"track": "next"}` or `"previous"` (the music), else `{"seconds": S}` (15 when not given).
struct SkipBody: Decodable, KnownFields {
    static let fields = ["track", "seconds"]
    var track: Sent<String>
    var seconds: Sent<Double>

    enum Move { case track(forward: Bool), seconds(Double) }

    func move() throws -> Move {
        switch track {
        case .absent: break
        case .value("next"): return .track(forward: true)
        case .value("previous"): return .track(forward: false)
        case .value, .other: throw HTTPError(.badRequest, message: "'track' must be \"next\" or \"previous\"")
        }
        switch seconds {
        case .absent: return .seconds(15)
        case .value(let n) where n.isFinite: return .seconds(n)
        case .value(let n): throw Self.notANumber(.number(n))
        case .other(let v): throw Self.notANumber(v)
        }
    }

    static func notANumber(_ value: JSONValue) -> HTTPError {
        HTTPError(.badRequest, message: "'seconds' must be a number, got \(value.kind)")
    }
}

/// The answer to `POST /v1/skip`: the scene time it went to (finite scenes), and the music's file and position.
struct SkipAnswer: Encodable {
    var media: Double?
    var track: Int?
    var file: String?
    var position: Double?
}
