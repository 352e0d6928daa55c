import Foundation
import Hummingbird

/// WHEP (`POST /v1/whep` with an SDP offer → 201, the answer and its `Location`; `DELETE` there ends it), the window
/// a viewer's picture is laid out for, and the page at `/` that plays it.
struct WebRTCRoutes {
    let session: any ControlledSession

    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection()
        routes.get("/") { _, _ in try page() }
        routes.post("/v1/whep") { request, _ in try await answer(request) }
        routes.delete("/v1/whep/:id") { _, context in
            let webrtc = try whep(), id = context.parameters.get("id") ?? ""
            do { try await webrtc.end(id) } catch { throw HTTPError(.notFound, message: "\(error)") }
            return try Response.json(["ended": id])
        }
        routes.post("/v1/whep/:id/window") { request, context in
            try await follow(request, viewer: context.parameters.get("id") ?? "")
        }
        routes.patch("/v1/whep/:id") { _, _ -> Response in
            throw HTTPError(.methodNotAllowed, message: "no trickle ICE: the answer already carries every candidate")
        }
        return routes
    }

    /// The session's WHEP service; refused when the run has no WebRTC.
    func whep() throws -> any WHEPService {
        guard let webrtc = session.whep else {
            throw HTTPError(.notFound, message: "WebRTC is off: start with run --webrtc")
        }
        return webrtc
    }

    func page() throws -> Response {
        guard session.whep != nil else {
            throw HTTPError(.notFound, message: "the live page needs WebRTC: start with run --webrtc")
        }
        do {
            let page = try WebPage.load()
            return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-cache"],
                            body: .init(byteBuffer: ByteBuffer(bytes: page)))
        } catch { throw HTTPError(.notFound, message: "\(error)") }
    }

    func answer(_ request: Request) async throws -> Response {
        let webrtc = try whep()
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
            throw Self.refusal(for: e)
        }
    }

    /// Lays `viewer`'s picture out for the window in the body.
    func follow(_ request: Request, viewer: String) async throws -> Response {
        // The body is read first: a body that is not JSON is refused as such, with or without WebRTC.
        let body = try await request.jsonBody(as: WindowBody.self)
        _ = try whep()
        let window = try body.window()
        do { return try .json(try session.follow(viewer: viewer, window: window)) } catch {
            throw HTTPError.answering(error)
        }
    }

    /// Why an offer got no answer, with its status (a full house may be tried again in 10 s).
    static func refusal(for failure: WebRTCOutput.Failure) -> HTTPError {
        switch failure {
        case .badOffer: HTTPError(.badRequest, message: failure.description)
        case .full: HTTPError(.serviceUnavailable, headers: [.retryAfter: "10"], message: failure.description)
        case .stopping: HTTPError(.serviceUnavailable, message: failure.description)
        case .unknown: HTTPError(.notFound, message: failure.description)
        case .failed: HTTPError(.internalServerError, message: failure.description)
        }
    }
}

/// `POST /v1/whep/{id}/window`: `{"width": W, "height": H}`, the window in device pixels, or `{"main": true}`, the
/// main picture (a field of another type counts as absent).
struct WindowBody: Decodable {
    var main: Sent<Bool>
    var width: Sent<Double>
    var height: Sent<Double>

    /// The window to lay the viewer's picture out for; nil for the main picture.
    func window() throws -> PixelSize? {
        if main.value == true { return nil }
        guard let size = try PixelSize.requested(width: width, height: height) else {
            throw HTTPError(.badRequest, message: "expected {\"width\": W, \"height\": H} (the window in device "
                            + "pixels) or {\"main\": true} (the main picture)")
        }
        return size
    }
}
