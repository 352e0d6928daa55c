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
