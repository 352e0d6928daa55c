import Foundation
import Hummingbird

/// The HLS ladder's folder (`--hls`) for players: `/hls/TOKEN/master.m3u8` (TOKEN a watch link's or the control
/// token; `/hls/master.m3u8` on loopback without a token),
/// its media playlists and segments, nothing else.
struct HLSRoutes {
    let session: any ControlledSession
    /// Notes the players of each watch link.
    let viewers: LinkViewers

    var routes: RouteCollection<ControlContext> {
        let routes = RouteCollection(context: ControlContext.self)
        routes.get("/hls/**") { _, context in
            if let link = context.link { viewers.notePlayer(link: link, from: context.remoteAddress) }
            return try file(context.parameters.getCatchAll(), tokenInPath: context.tokenInPath)
        }
        return routes
    }

    func file(_ path: [Substring], tokenInPath: Bool) throws -> Response {
        guard let folder = session.hlsFolder else {
            throw HTTPError(.notFound, message: "no HLS ladder here: start with run --hls DIR")
        }
        var parts = path.map { $0.removingPercentEncoding ?? String($0) }
        // The access check matched the token in the path already.
        if tokenInPath { parts = Array(parts.dropFirst()) }
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
