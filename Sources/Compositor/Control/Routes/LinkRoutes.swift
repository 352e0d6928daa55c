import Foundation
import Hummingbird

/// Watch links over the API: `GET /v1/access` (what the caller may do: the page asks it to know whether to show its
/// controls), and for the owner `GET /v1/links`, `POST /v1/links` (`{"label": …, "expires": "2h"}`) and
/// `DELETE /v1/links/ID`.
struct LinkRoutes {
    let session: any ControlledSession
    let links: WatchLinks
    let viewers: LinkViewers
    /// `http` or `https`: how the caller reached the port.
    let scheme: String

    var routes: RouteCollection<ControlContext> {
        let routes = RouteCollection(context: ControlContext.self)
        routes.get("/v1/access") { _, context in
            let audio = session.statusPayload().audio
            guard let id = context.link else { return try Response.json(Access(can: "drive", audio: audio)) }
            // A link of ours, or one whom the auth hook let watch.
            return try Response.json(Access(can: "watch", link: id, expires: links.link(id)?.expires, audio: audio))
        }
        routes.get("/v1/links") { request, _ in
            try Response.json(links.all.map { describe($0, base: base(of: request)) })
        }
        routes.post("/v1/links") { request, _ in
            let body = try await request.jsonBody(as: LinkBody.self)
            let expires = try body.expiresIn()
            let link: WatchLinks.Link
            do { link = try links.create(label: try body.labelGiven(), expiresIn: expires) } catch { throw HTTPError.answering(error) }
            session.log("watch link \(link.id) made" + (link.label.map { " (\($0))" } ?? "")
                        + (link.expires.map { ", until \(ISO8601DateFormatter().string(from: $0))" } ?? ""))
            var response = try Response.json(describe(link, base: base(of: request)))
            response.status = .created
            response.headers[.location] = "/v1/links/\(link.id)"
            return response
        }
        routes.delete("/v1/links/:id") { _, context in
            let id = context.parameters.get("id") ?? ""
            let link: WatchLinks.Link
            do { link = try links.revoke(id) } catch { throw HTTPError.answering(error) }
            return try Response.json(describe(link, base: nil))
        }
        return routes
    }

    /// `http(s)://HOST:PORT` as the caller reached it (a listening address such as 0.0.0.0 is no address to give).
    func base(of request: Request) -> String? {
        request.head.authority.map { scheme + "://" + $0 }
    }

    /// What the caller may do, and whether the stream has sound (the page offers to receive it only then).
    struct Access: Encodable {
        var can: String
        var link: String?
        var expires: Date?
        var audio: String
    }

    /// A link as the owner sees it: its token and the URLs to give, its state, who watches through it.
    struct Described: Encodable {
        var id: String
        var label: String?
        var token: String
        var page: String?
        var hls: String?
        var created: Date
        var expires: Date?
        var revoked: Date?
        var live: Bool
        var viewers: LinkViewers.Counts
    }

    func describe(_ link: WatchLinks.Link, base: String?) -> Described {
        let open = Set(session.whep?.sessionIDs ?? []), rtsp = session.rtspViewersByLink
        return Described(id: link.id, label: link.label, token: link.token,
                         page: base.map { ControlServer.pageURL(base: $0, token: link.token) },
                         hls: session.hlsFolder == nil ? nil : base.map { $0 + "/hls/\(link.token)/master.m3u8" },
                         created: link.created, expires: link.expires, revoked: link.revoked,
                         live: link.isLive(at: links.now),
                         viewers: viewers.counts(of: link.id, openSessions: open, rtsp: rtsp))
    }
}

/// `POST /v1/links`: `{"label": "grandma", "expires": "2h"}` (both optional; `expires` as 90s, 45m, 2h, 7d or seconds).
struct LinkBody: Decodable, KnownFields {
    static let fields = ["label", "expires"]
    var label: Sent<String>
    var expires: Sent<JSONValue>

    func expiresIn() throws -> TimeInterval? {
        switch expires {
        case .absent, .other(.null): return nil
        case .value(.string(let s)):
            do { return try WatchLinks.duration(s) } catch { throw HTTPError.answering(error) }
        case .value(.number(let n)): return n
        default:
            throw HTTPError(.badRequest, message: "\"expires\" is a time such as \"2h\" or a number of seconds")
        }
    }

    func labelGiven() throws -> String? {
        switch label {
        case .absent, .other(.null): return nil
        case .value(let s): return s
        case .other: throw HTTPError(.badRequest, message: "\"label\" is a string, e.g. \"grandma's TV\"")
        }
    }
}
