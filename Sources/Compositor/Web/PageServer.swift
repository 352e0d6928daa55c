import Foundation
import Hummingbird
import NIOCore

/// Serves web widgets' pages to their WebKit processes, on loopback, under a random path (a capability: nothing else
/// on the machine can guess it): each widget's wrapper document, the scene folder's files (and nothing above it),
/// inline HTML, and the wrappers' reports (alive, loaded, calls made, errors). A page loaded from here is one more
/// origin the control API refuses: it carries no token.
///
/// `@unchecked Sendable`: `pages` and `inline` are set before `start()`; reports go to each page's handler.
final class PageServer: @unchecked Sendable {
    /// What the server knows of one widget's page.
    struct Page {
        /// What WebKit renders: an HTML file below the folder or inline HTML, served with the agent first in it, or
        /// the wrapper document with the page in an iframe (a page from elsewhere, a file that is not HTML).
        enum Source { case file(String), inline(String), framed }
        var source: Source
        /// The wrapper document (a framed page) or the agent's script tag, for a size and the address its reports
        /// go to.
        var script: (PixelSize, String) -> String
        var onReport: @Sendable ([String: JSONValue]) -> Void
        /// The steps of a page on the scene's clock (`pipcompose render`), nil for a page on the wall clock.
        var steps: StepBoard?
    }

    let folder: String
    private let secret = ControlToken.random()
    private let service = HTTPService()
    private let lock = NSLock()
    private var pages: [String: Page] = [:]
    private var sizes: [String: PixelSize] = [:]

    init(folder: String) {
        self.folder = URL(fileURLWithPath: folder).standardizedFileURL.resolvingSymlinksInPath().path
    }

    var base: String { "http://127.0.0.1:\(service.port)/\(secret)" }

    /// Serves `page` as `id`. A page may be served under a second name too (`PageProcess.name(of:slot:)`: a launch
    /// started beside the running one), with its own reports.
    func add(_ id: String, _ page: Page) { lock.withLock { pages[id] = page } }

    /// The size the wrapper document of `id` is made for (its iframe's, until the widget resizes it by script).
    func setSize(_ size: PixelSize, of id: String) { lock.withLock { sizes[id] = size } }

    func wrapperURL(_ id: String) -> String { base + "/w/" + escaped(id) }
    /// What WebKit loads for widget `id`: its own HTML file or inline HTML, or the wrapper with the page in a frame.
    func pageURL(_ id: String) -> String {
        switch lock.withLock({ pages[id]?.source }) {
        case .file(let relative)?: base + "/p/" + escaped(id) + "/" + components(relative)
        case .inline?: inlineURL(id)
        case .framed?, nil: wrapperURL(id)
        }
    }
    func fileURL(_ relative: String) -> String { base + "/f/" + components(relative) }
    func inlineURL(_ id: String) -> String { base + "/h/" + escaped(id) }
    func reportURL(_ id: String) -> String { base + "/r/" + escaped(id) }
    /// Where a page on the scene's clock asks for its steps, given where it reports.
    static func stepsURL(report: String) -> String {
        guard let r = report.range(of: "/r/", options: .backwards) else { return report }
        return report.replacingCharacters(in: r, with: "/s/")
    }

    private func escaped(_ s: String) -> String { s.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? s }
    private func components(_ relative: String) -> String {
        relative.split(separator: "/").map { escaped(String($0)) }.joined(separator: "/")
    }

    /// Widget `id`'s page and the size it is made for.
    private func entry(_ id: String) -> (Page, PixelSize)? {
        lock.withLock { pages[id].map { ($0, sizes[id] ?? PixelSize(width: 320, height: 180)) } }
    }

    func start() throws { try service.start(router(), host: "127.0.0.1", port: 0, label: "pipcompose.pages") }
    func stop() { service.stop() }

    private func router() -> Router<BasicRequestContext> {
        let router = Router()
        let secret = self.secret
        router.add(middleware: PageGuard(secret: secret))
        router.get("/:secret/w/:id") { [self] _, context in
            let id = context.parameters.get("id") ?? ""
            guard let (page, size) = entry(id) else {
                throw HTTPError(.notFound)
            }
            return html(page.script(size, reportURL(id)))
        }
        router.get("/:secret/h/:id") { [self] _, context in
            let id = context.parameters.get("id") ?? ""
            guard let (page, size) = entry(id),
                  case .inline(let text) = page.source else { throw HTTPError(.notFound) }
            // Relative links of inline HTML are taken from the scene's folder.
            return html(PageWrapper.inject("<base href=\"\(base)/f/\">" + page.script(size, reportURL(id)), into: text))
        }
        // A widget's own file with the agent first in it; the files it links to below it, as they are.
        router.get("/:secret/p/:id/**") { [self] _, context in
            let id = context.parameters.get("id") ?? ""
            let relative = context.parameters.getCatchAll().joined(separator: "/")
            let path = relative.removingPercentEncoding ?? relative
            guard let (page, size) = entry(id) else {
                throw HTTPError(.notFound)
            }
            guard case .file(let own) = page.source, own.split(separator: "/") == path.split(separator: "/") else {
                return try file(path)
            }
            guard let real = FolderFile.resolve(path, below: folder), let data = FileManager.default.contents(atPath: real) else {
                page.onReport(["kind": .string("fail"), "reason": .string("the page answered 404 (\(own) is not in \(folder))")])
                throw HTTPError(.notFound)
            }
            return html(PageWrapper.inject(page.script(size, reportURL(id)), into: String(decoding: data, as: UTF8.self)))
        }
        router.get("/:secret/f/**") { [self] _, context in
            let relative = context.parameters.getCatchAll().joined(separator: "/")
            return try file(relative.removingPercentEncoding ?? relative)
        }
        // A page on the scene's clock asks for its next step (a long poll): 200 with the step, 204 when there are
        // no more.
        router.get("/:secret/s/:id") { [self] request, context in
            let id = context.parameters.get("id") ?? ""
            guard let board = lock.withLock({ pages[id]?.steps }) else { throw HTTPError(.notFound) }
            let after = request.uri.queryParameters.get("after").flatMap { Int64($0) } ?? -1
            guard let step = await board.next(after: after) else { return Response(status: .noContent) }
            return Response(status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
                            body: .init(byteBuffer: ByteBuffer(string: step)))
        }
        router.post("/:secret/r/:id") { [self] request, context in
            let id = context.parameters.get("id") ?? ""
            let body = try await request.body.collect(upTo: 64 << 10)
            guard let handler = lock.withLock({ pages[id]?.onReport }),
                  let report = try? JSONDecoder().decode([String: JSONValue].self, from: Data(body.readableBytesView))
            else { throw HTTPError(.badRequest) }
            handler(report)
            return Response(status: .noContent)
        }
        return router
    }

    private func html(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                 body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A file below the scene's folder, links resolved; anything else is 404.
    private func file(_ relative: String) throws -> Response {
        guard let real = FolderFile.resolve(relative, below: folder),
              let data = FileManager.default.contents(atPath: real) else {
            throw HTTPError(.notFound)
        }
        let type = Self.types[URL(fileURLWithPath: real).pathExtension.lowercased()] ?? "application/octet-stream"
        return Response(status: .ok, headers: [.contentType: type, .cacheControl: "no-store"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static let types = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8", "css": "text/css",
        "js": "text/javascript", "mjs": "text/javascript", "json": "application/json", "svg": "image/svg+xml",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf", "txt": "text/plain",
        "xml": "application/xml", "mp4": "video/mp4", "webm": "video/webm",
    ]
}

/// Only requests to 127.0.0.1 under the server's secret path are answered.
private struct PageGuard: RouterMiddleware {
    typealias Context = BasicRequestContext
    let secret: String

    func handle(_ request: Request, context: Context,
                next: (Request, Context) async throws -> Response) async throws -> Response {
        let first = request.uri.path.split(separator: "/").first.map(String.init) ?? ""
        guard ControlAccess.same(first, secret),
              let host = request.head.authority, ControlAccess.hostName(host) == "127.0.0.1" else {
            throw HTTPError(.notFound)
        }
        return try await next(request, context)
    }
}

extension PageServer.Page.Source {
    /// Rendered as it is, the agent in it (not in an iframe of the wrapper).
    var hasAgent: Bool {
        if case .framed = self { return false }
        return true
    }
}
