import Foundation
import Hummingbird

/// WHEP (`POST /v1/whep` with an SDP offer → 201, the answer and its `Location`; `DELETE` there ends it), the window
/// a viewer's picture is laid out for, and the page at `/` that plays it.
struct WebRTCRoutes {
    let session: any ControlledSession
    let links: WatchLinks
    let viewers: LinkViewers

    var routes: RouteCollection<ControlContext> {
        let routes = RouteCollection(context: ControlContext.self)
        routes.get("/") { _, _ in try page() }
        routes.post("/v1/whep") { request, context in try await answer(request, link: context.link) }
        // The page's RTCPeerConnection configuration: the STUN and TURN servers, with a TURN login of its own.
        routes.get("/v1/ice") { _, context in
            _ = try whep()
            return try Response.json(IceAnswer(iceServers: session.browserIceServers(label: context.link ?? "owner")))
        }
        routes.delete("/v1/whep/:id") { _, context in
            let webrtc = try whep(), id = try own(context)
            do { try await webrtc.end(id) } catch { throw HTTPError(.notFound, message: "\(error)") }
            viewers.sessionEnded(id)
            return try Response.json(["ended": id])
        }
        routes.post("/v1/whep/:id/window") { request, context in
            try await follow(request, viewer: try own(context))
        }
        routes.patch("/v1/whep/:id") { request, context in try await trickle(request, viewer: try own(context)) }
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

    /// The session the path names, when the caller may act on it: the owner on any, a watch link on those it
    /// opened (a viewer cannot end or re-lay another's).
    func own(_ context: ControlContext) throws -> String {
        let id = context.parameters.get("id") ?? ""
        if let link = context.link, viewers.link(ofSession: id) != link {
            throw HTTPError(.forbidden, message: "WHEP session '\(id)' was not opened through watch link \(link): a "
                            + "watch link acts only on its own sessions")
        }
        return id
    }

    func answer(_ request: Request, link: String?) async throws -> Response {
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
            if let link {
                viewers.noteSession(id, link: link, open: Set(webrtc.sessionIDs))
                // Revoked while the offer was answered: the session it opened goes too (one whom the auth hook
                // let watch has no link of ours to revoke).
                guard links.link(link) == nil || links.isLive(link) else {
                    try? await webrtc.end(id)
                    throw HTTPError(.unauthorized, message: "watch link \(link) was revoked")
                }
            }
            return Response(status: .created, headers: [.contentType: "application/sdp", .location: "/v1/whep/\(id)"],
                            body: .init(byteBuffer: ByteBuffer(string: sdp)))
        } catch let e as WebRTCOutput.Failure {
            throw Self.refusal(for: e)
        }
    }

    /// Candidates `viewer` found after its offer (trickle ICE, RFC 8840), for its webrtcbin: 204 once it has them.
    func trickle(_ request: Request, viewer: String) async throws -> Response {
        let webrtc = try whep()
        let type = request.headers[.contentType]?.lowercased() ?? ""
        guard type.hasPrefix("application/trickle-ice-sdpfrag") else {
            throw HTTPError(.unsupportedMediaType, message: "send candidates with Content-Type: "
                            + "application/trickle-ice-sdpfrag (RFC 8840) (got '\(type)')")
        }
        let buffer: ByteBuffer
        do { buffer = try await request.body.collect(upTo: 64 << 10) } catch {
            throw HTTPError(.contentTooLarge, message: "a trickle ICE fragment is at most 64 KB")
        }
        let fragment: TrickleFragment
        do { fragment = try TrickleFragment.parse(String(decoding: buffer.readableBytesView, as: UTF8.self)) } catch {
            throw HTTPError(.badRequest, message: "not a trickle ICE fragment: \(error)")
        }
        do { _ = try await webrtc.trickle(viewer, fragment: fragment) } catch let e as WebRTCOutput.Failure {
            throw Self.refusal(for: e)
        }
        return Response(status: .noContent)
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
        case .refusedCandidates: HTTPError(.unprocessableContent, message: failure.description)
        }
    }
}

/// `GET /v1/ice`: what the page gives its `RTCPeerConnection` (`iceServers`).
struct IceAnswer: Encodable {
    var iceServers: [IceSettings.BrowserServer]
}

/// `POST /v1/whep/{id}/window`: `{"width": W, "height": H}`, the window in device pixels, or `{"main": true}`, the
/// main picture (a field of another type counts as absent).
struct WindowBody: Decodable, KnownFields {
    static let fields = ["width", "height", "main"]
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
