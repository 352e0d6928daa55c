import Foundation

/// The web pages of a render, on the scene's clock: one page per web widget of the scene (the main picture's; a
/// rendition's widget shows it scaled to its box, as in a run), each loaded before frame 0 and then stepped to every
/// frame's scene time, the frame drawn once each page has drawn that moment (`SceneClockScript`, `PageSteps`).
/// Calls on the timeline (cues) are made before their frame's step and answered before it: the frame shows them.
final class RenderPages {
    private let set: PageSet
    private let timeout: Double

    /// Nil when `main` has no web widget. `clockStart`: what the pages' `Date` shows at scene time 0 (Unix ms).
    init?(main: Renderer, scene: Scene, size: PixelSize, clockStart: Int64, web: WebSettings,
          warn: @escaping @Sendable (String) -> Void) throws {
        var settings = web
        settings.sceneClockStart = clockStart
        let widgets = main.widgets.compactMap { $0 as? WebWidget }
        guard let set = try PageSet(widgets: widgets, folder: scene.folder, fps: scene.fps, picture: size,
                                    settings: settings, state: { size in
                                        size.map { "{\"width\":\($0.width),\"height\":\($0.height),\"viewers\":0,\"playing\":true}" } ?? "{}"
                                    }, onEvent: { event in if let line = event.logLine { warn(line) } })
        else { return nil }
        self.set = set
        timeout = max(web.loadTimeout, 10)
    }

    /// The web widgets whose pages cannot be put on the scene's clock: a page from elsewhere (its scripts are another
    /// origin's: nothing of pipcompose's runs before them) and a file that is not HTML (shown in a frame). With why.
    static func refusals(in scene: Scene) -> [(id: String, why: String)] {
        scene.widgets.compactMap { w -> (String, String)? in
            guard let web = w.config as? WebConfig else { return nil }
            switch web.source {
            case .url(let url):
                return (w.id, "its page comes from elsewhere (\(url)): its scripts cannot be put on the scene's "
                        + "clock; save the page into the scene's folder and name the file")
            case .file(let path, _) where !["html", "htm"].contains(URL(fileURLWithPath: path).pathExtension.lowercased()):
                return (w.id, "'\(path)' is not an HTML file: only a page's scripts can be put on the scene's clock; "
                        + "wrap it in an HTML page")
            default: return nil
            }
        }
    }

    /// Starts every page and waits until each has loaded.
    func start() throws(PageStepError) {
        set.start()
        for page in set.pages { try page.steps.waitUntilLoaded(timeout: timeout, page: page.id) }
    }

    /// Moves every page to frame `n` (`ms` scene milliseconds), calling the functions `calls` names on its page first
    /// (by widget id: a cue's `update`…; one that throws is said as the page's error), and waits until each has drawn
    /// it.
    func step(_ n: Int64, ms: Double, calls: [String: [(name: String, argument: String?)]] = [:]) throws(PageStepError) {
        for page in set.pages { page.beginStep(n, ms: ms, calls: calls[page.id] ?? []) }
        for page in set.pages { try page.waitForStep(n, timeout: timeout) }
    }

    func stop() { set.stop() }
}
