import Foundation
import Hummingbird

/// What a watcher reads: the status, the metrics, the event stream and the picture.
struct StatusRoutes {
    let session: any ControlledSession
    let links: WatchLinks
    let viewers: LinkViewers

    var routes: RouteCollection<ControlContext> {
        let routes = RouteCollection(context: ControlContext.self)
        routes.get("/v1/status") { _, _ in
            var payload = session.statusPayload()
            let open = Set(session.whep?.sessionIDs ?? []), rtsp = session.rtspViewersByLink, now = links.now
            payload.links = links.all.map {
                StatusPayload.Link(id: $0.id, label: $0.label, live: $0.isLive(at: now),
                                   viewers: viewers.counts(of: $0.id, openSessions: open, rtsp: rtsp))
            }
            return try Response.json(payload)
        }
        routes.get("/metrics") { _, _ in
            viewers.record(links.all, openSessions: Set(session.whep?.sessionIDs ?? []), rtsp: session.rtspViewersByLink)
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                     body: .init(byteBuffer: ByteBuffer(string: session.metricsText())))
        }
        routes.get("/v1/events") { _, _ in events() }
        routes.get("/v1/frame.png") { request, _ in try await frame(request) }
        return routes
    }

    /// Server-sent events: each `SessionEvent` as it happens, until the server stops.
    func events() -> Response {
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

    /// The picture viewers see now as PNG, scaled to fit `?size=WxH` when given.
    func frame(_ request: Request) async throws -> Response {
        var size: PixelSize?
        if let s = request.uri.queryParameters.get("size") {
            do { size = try RenderSize.parse(s) } catch { throw HTTPError(.badRequest, message: "\(error)") }
        }
        let png = try await session.framePNG(size: size)
        return Response(status: .ok, headers: [.contentType: "image/png"],
                        body: .init(byteBuffer: ByteBuffer(bytes: png)))
    }
}
