import Foundation
import Hummingbird

/// The HLS ladder's folder (`--hls`) for players: `/hls/TOKEN/master.m3u8` (`/hls/master.m3u8` without a token),
/// its media playlists and segments, nothing else.
struct HLSRoutes {
    let session: any ControlledSession
    /// The control token, which leads the path when there is one.
    let token: String?

    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection()
        routes.get("/hls/**") { _, context in try file(context.parameters.getCatchAll()) }
        return routes
    }

    func file(_ path: [Substring]) throws -> Response {
        guard let folder = session.hlsFolder else {
            throw HTTPError(.notFound, message: "no HLS ladder here: start with run --hls DIR")
        }
        var parts = path.map { $0.removingPercentEncoding ?? String($0) }
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
