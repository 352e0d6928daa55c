import Foundation

/// What the control API and `ctl` do to a running session: the PiP controller's verbs.
extension LiveSession {
    public func pause() {
        guard let loop else { return }
        if playback.pause(at: loop.runningSeconds) { events.publish("paused", ["media": fmt(playback.media(at: loop.runningSeconds))]) }
    }

    public func play() {
        guard let loop else { return }
        if playback.play(at: loop.runningSeconds) { events.publish("playing", ["media": fmt(playback.media(at: loop.runningSeconds))]) }
    }

    /// Skips scene time; refused for a live scene.
    @discardableResult
    public func skip(by seconds: Double) throws(ControlError) -> Double {
        guard let loop else { throw .conflict("not running") }
        do {
            let t = try playback.skip(by: seconds, at: loop.runningSeconds)
            events.publish("skipped", ["by": fmt(seconds), "media": fmt(t)])
            return t
        } catch {
            throw .conflict(error.description)
        }
    }

    /// The render-size callback from outside; applied before the next frame.
    public func resize(to size: PixelSize) {
        requestResize(size)
    }

    /// Changes widget properties; checked now, applied before the next frame.
    public func updateWidget(id: String, properties: [String: JSONValue]) throws(ControlError) {
        let change = try WidgetUpdate.prepare(scene: renderer.scene, id: id, body: properties,
                                              current: renderer.widget(id: id))
        guard let loop else { throw .conflict("not running") }
        loop.perform(change)
        events.publish("widgetUpdated", ["id": id, "properties": properties.keys.sorted().joined(separator: ",")])
    }

    /// The frame now, rendered afresh at `size` (the stream is not touched).
    public func framePNG(size: PixelSize?) throws -> Data {
        let media = loop.map { playback.media(at: $0.runningSeconds) } ?? 0
        let r = Renderer(scene: renderer.scene, size: size ?? renderer.size)
        let surface = try r.snapshot(at: FrameTime(frame: loop?.stats.frame ?? 0, media: media, wall: Date(),
                                                   paused: playback.isPaused))
        let path = NSTemporaryDirectory() + "pipcompose-frame-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try surface.writePNG(to: path)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    func fmt(_ v: Double) -> String { String(format: "%.3f", v) }
}
