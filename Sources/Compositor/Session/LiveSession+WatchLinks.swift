import Foundation

extension LiveSession {
    /// RTSP viewers log in with watch links (`--rtsp-user NAME`): each live link's token is a password of that user,
    /// from when it is made until it ends, when the viewers it let in are disconnected. Without `--rtsp-user` RTSP
    /// asks no login and links change nothing there. After `start()`.
    public func admit(watchLinks links: WatchLinks) {
        guard let server = servers.first(RTSPOutput.self)?.server, server.requiresLogin else { return }
        links.onMade { server.admit(watchLink: $0.id, token: $0.token) }
        links.onEnd { [log] link in
            let playing = server.viewersByLink[link.id] ?? 0
            server.refuse(watchLink: link.id, token: link.token)
            if playing > 0 {
                log("watch link \(link.id) \(link.revoked == nil ? "expired" : "revoked"): disconnecting its \(playing) "
                    + "RTSP viewer\(playing == 1 ? "" : "s")")
            }
        }
    }

    /// RTSP viewers playing through each watch link now.
    public var rtspViewersByLink: [String: Int] { servers.first(RTSPOutput.self)?.server.viewersByLink ?? [:] }
}
