/// What a watch link may ask of the control port: the page (which then shows the video and nothing that drives),
/// what it is allowed (`/v1/access`), the ICE servers to reach the stream (`/v1/ice`), what plays and its cover
/// (`/v1/nowplaying`, for the browser's Picture-in-Picture window: the card shows it in the picture anyway), a WHEP
/// session and that session's own window, and the HLS ladder. Everything else (the controls, outputs, widgets, status, events,
/// frame.png, metrics, links) needs the control token. Whether a WHEP session is the link's own is the route's to
/// check: the path alone cannot say.
public enum WatchRules {
    public static func allows(method: String, path: String) -> Bool {
        let p = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        switch method {
        case "GET":
            return p == [""] || p == ["v1", "access"] || p == ["v1", "ice"] || p == ["v1", "nowplaying"]
                || p == ["v1", "nowplaying", "artwork"] || (p.first == "hls" && p.count >= 3)
        case "POST":
            return p == ["v1", "whep"] || (p.count == 4 && p[0] == "v1" && p[1] == "whep" && !p[2].isEmpty && p[3] == "window")
        case "DELETE":
            return p.count == 3 && p[0] == "v1" && p[1] == "whep" && !p[2].isEmpty
        default:
            return false
        }
    }
}
