import Foundation
import Hummingbird

/// What a browser's Picture-in-Picture window shows: the metadata and the scene's state (`GET /v1/nowplaying`) and
/// the card's cover (`GET /v1/nowplaying/artwork`). A watch link may read both: the card shows them in the picture.
struct NowPlayingRoutes {
    let session: any ControlledSession

    var routes: RouteCollection<ControlContext> {
        let routes = RouteCollection(context: ControlContext.self)
        routes.get("/v1/nowplaying") { _, _ in try Response.json(session.nowPlaying()) }
        routes.get("/v1/nowplaying/artwork") { _, _ in
            let png: Data?
            do { png = try session.artworkPNG(side: 512) } catch {
                throw HTTPError(.notFound, message: "the now-playing card's cover cannot be drawn: \(error)")
            }
            guard let png else { throw HTTPError(.notFound, message: "the now-playing card shows no cover") }
            return Response(status: .ok, headers: [.contentType: "image/png", .cacheControl: "private, max-age=3600"],
                            body: .init(byteBuffer: ByteBuffer(bytes: png)))
        }
        return routes
    }
}
