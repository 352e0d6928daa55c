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
        // The viewport WebKit renders: the picture (a widget never outgrows it unless the picture grows).
        let viewport = picture
        pages = widgets.map { w in
            let page = PageProcess(id: w.id, server: server, settings: .init(
                executable: settings.resolvedExecutable, fps: w.config.fps ?? fps, viewport: viewport,
                memoryLimit: settings.memoryLimit), onEvent: onEvent)
            let inner: String, sameOrigin: Bool, inline: String?
            switch w.config.source {
            case .file(let path, _): (inner, sameOrigin, inline) = (server.fileURL(path), true, nil)
            case .url(let url): (inner, sameOrigin, inline) = (url, false, nil)
            case .html(let text, _): (inner, sameOrigin, inline) = (server.inlineURL(w.id), true, text)
            }
            let report = server.reportURL(w.id), data = w.config.data, timeout = settings.loadTimeout
            server.add(w.id, PageServer.Page(
                wrapper: { size in
                    PageWrapper.html(.init(inner: inner, sameOrigin: sameOrigin, size: size, report: report, data: data,
                                           loadTimeout: timeout, state: state(size)))
                },
                inline: inline, onReport: { [weak page] in page?.report($0) }))
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
