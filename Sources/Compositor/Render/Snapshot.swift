import Foundation

/// One frame of a scene rendered to a PNG, no encoder involved.
public struct Snapshot {
    public var scene: Scene
    public var size: PixelSize
    /// Scene time in seconds.
    public var at: Double
    /// Wall-clock time shown by clocks and timecodes.
    public var wall: Date
    /// How web widgets' pages run (and how long a snapshot waits for them).
    public var web = WebSettings()

    public init(scene: Scene, size: PixelSize? = nil, at: Double = 0, wall: Date = Date()) {
        self.scene = scene
        self.size = size ?? scene.size
        self.at = at
        self.wall = wall
    }

    /// Data for a web widget's template that its page is given instead of the scene's `data:` (a preview with data:
    /// `snapshot --data ID=JSON`, `POST /v1/web/ID/snapshot`), checked: a web widget of the scene, JSON data.
    public struct DataRefusal: Error, CustomStringConvertible {
        public let description: String
    }

    public mutating func give(data: String, toWebWidget id: String) throws(DataRefusal) {
        guard let i = scene.widgets.firstIndex(where: { $0.id == id }) else {
            let web = scene.widgets.filter { $0.config is WebConfig }.map(\.id)
            throw DataRefusal(description: "no widget '\(id)' in the scene; its web widgets: "
                              + (web.isEmpty ? "none" : web.joined(separator: ", ")))
        }
        guard var web = scene.widgets[i].config as? WebConfig else {
            throw DataRefusal(description: "widget '\(id)' is a \(scene.widgets[i].type) widget: data is for web widgets")
        }
        let text = data.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (text.hasPrefix("{") || text.hasPrefix("[")),
              (try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil else {
            throw DataRefusal(description: "the data for '\(id)' must be a JSON object or list, e.g. {\"f0\": \"Jane Doe\"}; "
                              + "got '\(text.prefix(60))'")
        }
        web.data = text
        scene.widgets[i].config = web
    }

    /// Renders and writes `path`; warnings (missing images, fonts) go to `warn`.
    public func write(to path: String, warn: @escaping @Sendable (String) -> Void) throws {
        let renderer = Renderer(scene: scene, size: size, warn: warn)
        // Each video layer shows its source's picture at this scene time (files) or its first picture (live); each
        // web widget its page once it has loaded and drawn (or its background, after `web.loadTimeout`).
        let context = InputContext(scene: scene, picture: size, web: web, pageState: { size in
            size.map { "{\"width\":\($0.width),\"height\":\($0.height),\"viewers\":0,\"playing\":true}" } ?? "{}"
        }, onEvent: { event in if let line = event.logLine { warn(line) } }, warn: warn)
        let inputs = try WidgetFactory.stills(of: renderer, at: at, context: context)
        defer { inputs.forEach { $0.stop() } }
        let frame = Int64((at * Double(scene.fps)).rounded(.down))
        let surface = try renderer.snapshot(at: FrameTime(frame: frame, media: at, wall: wall))
        try surface.writePNG(to: path)
    }
}
