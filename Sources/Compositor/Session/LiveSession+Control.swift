import Foundation

/// What the control API and `ctl` do to a running session: the PiP controller's verbs.
extension LiveSession {
    public func pause() {
        guard let loop else { return }
        if playback.pause(at: loop.runningSeconds) { events.publish(.paused(media: playback.media(at: loop.runningSeconds))) }
        inputs.music?.setPaused(true)
    }

    public func play() {
        guard let loop else { return }
        if playback.play(at: loop.runningSeconds) { events.publish(.playing(media: playback.media(at: loop.runningSeconds))) }
        inputs.music?.setPaused(false)
    }

    public typealias Skipped = SkipOutcome

    /// Skips `seconds` of scene time (a finite scene) and of the music (within the file heard, past its end to
    /// the next); refused when there is neither.
    @discardableResult
    public func skip(by seconds: Double) throws(ControlError) -> Skipped {
        guard let loop else { throw .conflict("not running") }
        let music = inputs.music?.player
        var out = Skipped()
        if playback.duration != nil || music == nil {
            do { out.media = try playback.skip(by: seconds, at: loop.runningSeconds) } catch {
                throw .conflict(error.description + ", or run it with --audio FILE to skip within the music")
            }
        }
        if let music {
            let (index, position) = music.seek(by: seconds)
            out.track = (index, music.files[index].name, position)
        }
        events.publish(.skipped(by: seconds, media: out.media, track: out.track?.index))
        return out
    }

    /// The next or previous file of the music (`--audio FILE`); refused without music.
    @discardableResult
    public func skipTrack(forward: Bool) throws(ControlError) -> Skipped {
        guard loop != nil else { throw .conflict("not running") }
        guard let music = inputs.music?.player else {
            throw .conflict("there is no music to skip in: run with --audio FILE (an audio file, an .m3u playlist or a folder)")
        }
        let index = forward ? music.next() : music.previous()
        events.publish(.skippedTrack(track: index, forward: forward))
        return Skipped(media: nil, track: (index, music.files[index].name, 0))
    }

    /// The render-size callback from outside; applied before the next frame.
    public func resize(to size: PixelSize) {
        requestResize(size)
    }

    /// Changes widget properties; checked now, applied before the next frame, or before the first frame at `moment`
    /// (then the event `widgetUpdated` says which frame, once it landed).
    public func updateWidget(id: String, properties: [String: JSONValue], at moment: ChangeMoment?) throws(ControlError) {
        let prepared = try WidgetUpdate.prepare(scene: options.scene, id: id, body: properties)
        guard let loop else { throw .conflict("not running") }
        if let moment {
            if let spec = options.scene.widgets.first(where: { $0.id == id }),
               spec.config is VideoConfig || spec.config is WebConfig {
                throw .bad("widget '\(id)' (\(spec.type)) shows what its source or page draws, when it draws it: 'at' "
                           + "is for the widgets pipcompose draws itself")
            }
            let keys = properties.keys.sorted()
            do {
                try loop.change(widget: id, properties: Set(properties.keys), at: moment, landed: { [weak self] frame in
                    self?.events.publish(.widgetUpdated(id: id, properties: keys, frame: frame))
                }, prepared.apply)
            } catch {
                switch error {
                case .tooNear(let earliest):
                    throw .conflict("\(moment) is too near to be met: the earliest that can be is \(earliest); ask "
                                    + "for that or later (a change needs a frame's notice)")
                case .full(let limit):
                    throw .conflict("\(limit) changes wait for their moment already; ask again once some landed")
                }
            }
            return
        }
        loop.change(widget: id, properties: Set(properties.keys), prepared.apply)
        // An input that feeds the widget follows the change (a video layer's new source starts over).
        inputs.widgetChanged(id: id, prepared.change)
        events.publish(.widgetUpdated(id: id, properties: properties.keys.sorted()))
    }

    /// The picture viewers see now, as PNG: a copy of the last frame sent (live widget updates included), scaled
    /// to fit `size` when one is given (letterboxed, the aspect kept). Before the first frame, the scene rendered.
    public func framePNG(size: PixelSize?) async throws -> Data {
        let handover: Handover<ImageSurface>? = await withCheckedContinuation { done in
            guard let loop else { return done.resume(returning: nil) }
            loop.lastPicture { picture in done.resume(returning: picture.map(Handover.init)) }
        }
        var picture = try handover?.value ?? Renderer(scene: renderer.scene, size: options.size)
            .snapshot(at: FrameTime(frame: 0, media: 0, wall: Date()))
        if let size, size != PixelSize(width: picture.width, height: picture.height) {
            let scaled = try ImageSurface(width: size.width, height: size.height)
            let canvas = Canvas(surface: scaled)
            canvas.paint(size.rect, .black)
            let k = min(Double(size.width) / Double(picture.width), Double(size.height) / Double(picture.height))
            let w = Double(picture.width) * k, h = Double(picture.height) * k
            let dest = Rect(x: (Double(size.width) - w) / 2, y: (Double(size.height) - h) / 2, width: w, height: h)
            canvas.draw(picture, in: dest, clip: size.rect)
            picture = scaled
        }
        let path = NSTemporaryDirectory() + "pipcompose-frame-\(UUID().uuidString).png"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try picture.writePNG(to: path)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

}
