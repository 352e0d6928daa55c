import Foundation

/// The pages of a renderer's web widgets: the server they load from and one process each, attached to their
/// widgets. A run keeps it until it stops; a snapshot until each page has drawn.
final class PageSet: @unchecked Sendable {
    let server: PageServer
    let pages: [PageProcess]

    /// Nil when the renderer has no web widget. `state` is what `window.pipcompose` says for a page of a size.
    init?(widgets: [WebWidget], folder: String, fps: Int, picture: PixelSize, settings: WebSettings,
          state: @escaping @Sendable (PixelSize?) -> String, onEvent: @escaping @Sendable (SessionEvent) -> Void) throws {
        guard !widgets.isEmpty else { return nil }
        let server = PageServer(folder: folder)
        try server.start()
        self.server = server
        pages = widgets.map { w in
            // The viewport WebKit renders: the picture (a widget never outgrows it unless the picture grows). A
            // stepped page never changes size: its own size, and wpesrc copies no more than it.
            let viewport = settings.sceneClockStart != nil ? (w.pageSize ?? picture) : picture
            let replay = PageReplay(data: w.config.data)
            var remote: String?
            if case .url(let url) = w.config.source { remote = url }
            let page = PageProcess(id: w.id, server: server, settings: .init(
                executable: settings.resolvedExecutable, fps: w.config.fps ?? fps, viewport: viewport,
                memoryLimit: settings.memoryLimit,
                // A stepped page keeps its one launch: a new one would start its state over mid-render.
                renewGrowth: w.config.renew && settings.sceneClockStart == nil ? settings.renewGrowth : 0,
                remote: remote, stepped: settings.sceneClockStart != nil, sceneFPS: fps),
                replay: replay, onEvent: onEvent)
            let inner: String, source: PageServer.Page.Source, sameOrigin: Bool
            switch w.config.source {
            case .file(let path, _):
                // An HTML file is served with the agent in it; another kind of file (an SVG…) is shown in a frame.
                let html = ["html", "htm"].contains(URL(fileURLWithPath: path).pathExtension.lowercased())
                (inner, source, sameOrigin) = (server.fileURL(path), html ? .file(path) : .framed, true)
            case .url(let url): (inner, source, sameOrigin) = (url, .framed, false)
            case .html(let text, _): (inner, source, sameOrigin) = (server.inlineURL(w.id), .inline(text), true)
            }
            let timeout = settings.loadTimeout, clockStart = settings.sceneClockStart
            let served = PageServer.Page(
                source: source,
                script: { size, report in
                    // A page started again gets what the one before was told.
                    let told = replay.state
                    let o = PageWrapper.Options(inner: inner, sameOrigin: sameOrigin, size: size, report: report,
                                                data: told.data, playAtLoad: told.playing, loadTimeout: timeout,
                                                state: state(size), clockStart: clockStart)
                    return source.hasAgent ? PageWrapper.agent(o) : PageWrapper.html(o)
                },
                onReport: { _ in })
            // Served under two names, each launch reporting under its own: a renewal runs two launches at once.
            for slot in 0...1 {
                var named = served
                named.onReport = { [weak page] in page?.report($0, slot: slot) }
                // A stepped page has one launch (no renewal): its steps are asked for under the first name.
                if slot == 0, settings.sceneClockStart != nil { named.steps = page.board }
                server.add(PageProcess.name(of: w.id, slot: slot), named)
            }
            w.attach(page.frames)
            return page
        }
    }

    func start() { pages.forEach { $0.start() } }

    func stop() {
        pages.forEach { $0.stop() }
        server.stop()
    }
}

extension PageSet: SessionInput {
    func report(into status: inout LiveSession.Status) {
        status.web += pages.map(\.status).map {
            StatusPayload.Web(id: $0.id, state: $0.state.rawValue, frames: $0.frames, restarts: $0.restarts,
                              memoryMiB: $0.memoryBytes >> 20, lastError: $0.lastError, size: $0.size?.description,
                              webkitFrames: $0.webkitFrames, renewals: $0.renewals, renewing: $0.renewing)
        }
    }

    /// Pages are told their coming size when a resize is asked for, not at the frame that applies it: they re-lay
    /// meanwhile.
    func willResize(to size: PixelSize, scene: Scene) {
        let sizes = WebWidget.pageSizes(of: scene, at: size)
        for page in pages { if let s = sizes[page.id] { page.frames.expect(s) } }
    }
}
