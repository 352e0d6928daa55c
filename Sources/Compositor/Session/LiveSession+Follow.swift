import Foundation

/// What a browser that follows its window got (`POST /v1/whep/ID/window`).
public struct FollowOutcome: Codable, Sendable, Equatable {
    public var session: String
    /// `main`, or the rendition's `WxH`.
    public var picture: String
    /// The size it decodes once it switched (at that picture's next key frame).
    public var width: Int
    public var height: Int
    /// A rendition was made for this window now.
    public var made: Bool
    /// The picture is the window's own size.
    public var exact: Bool
    /// Why it is not, when it is not.
    public var note: String?
}

extension LiveSession {
    /// Shows WebRTC viewer `id` a picture laid out for its window of `window` pixels: the main picture when that is
    /// its size, a rendition of that size when there is one, else one made now (at most `--max-renditions` at once),
    /// else the nearest picture there is. `window` nil: the main picture (the old way: it may then resize the main
    /// picture for everyone with `POST /v1/resize`). It sees what it saw until a key frame of the new picture.
    public func follow(viewer id: String, window: PixelSize?) throws(ControlError) -> FollowOutcome {
        guard let webrtc = servers.first(WebRTCOutput.self), let loop else {
            throw .conflict("WebRTC is off: start with run --webrtc")
        }
        guard webrtc.viewerStates.contains(where: { $0.id == id }) else {
            throw .notFound("no WebRTC session '\(id)' (it ended, or was never made)")
        }
        let main = loop.stats.size
        func show(_ picture: PixelSize?, made: Bool = false, note: String? = nil) throws(ControlError) -> FollowOutcome {
            do { try webrtc.show(picture, to: id) } catch {
                switch error {
                case .unknown: throw .notFound(error.description)
                default: throw .conflict(error.description)
                }
            }
            let size = picture ?? main
            return FollowOutcome(session: id, picture: picture?.description ?? "main", width: size.width,
                                 height: size.height, made: made, exact: window == nil || size == window, note: note)
        }
        guard let window else { return try show(nil) }
        let wanted = WindowPicture.fitting(window, maxArea: WindowPicture.areaLimit(main: options.size))
        let shrunk = wanted == window ? nil
            : "a window of \(window) gets a picture of its shape at most \(WindowPicture.areaLimit(main: options.size)) pixels large: \(wanted)"
        if wanted == main { return try show(nil, note: shrunk) }
        if webrtc.offered.contains(wanted) { return try show(wanted, note: shrunk) }
        func nearest(_ why: String) throws(ControlError) -> FollowOutcome {
            let near = WindowPicture.nearest(wanted, among: [main] + webrtc.offered.sorted { $0.width < $1.width }) ?? main
            return try show(near == main ? nil : near, note: why + "; this window sees the nearest picture there is, \(near)")
        }
        guard let browser = servers.windows, browser.limit > 0 else {
            return try nearest("renditions for windows are off (--max-renditions 0)")
        }
        let got: (encoder: Encoder, new: Bool)?
        var shown: FollowOutcome?
        do {
            // The limit counts the renditions other windows want: one a window leaves for its new size is replaced,
            // so a window dragged about with the limit reached still gets its size. Shown before anything can drop it.
            got = try browser.make(wanted, othersWant: webrtc.renditionsWanted(besides: id),
                                   with: { try makeBrowserRendition(wanted, loop: loop, webrtc: webrtc) },
                                   then: { shown = try show(wanted, note: shrunk) })
        } catch let e as ControlError {
            throw e
        } catch {
            log("rendition \(wanted): \(error)")
            return try nearest("a rendition \(wanted) could not be made (\(error))")
        }
        guard let got, var shown else {
            return try nearest("\(browser.limit) renditions are made for browser windows already (--max-renditions)")
        }
        if got.new { events.publish(.renditionMade(size: wanted, session: id)) }
        shown.made = got.new
        return shown
    }

    /// A rendition for a window: its picture, warmed up here (off the frame loop), adopted by the loop (which brings
    /// its widgets to what the others show), and its encoder, at the size's default bitrate, offered to viewers.
    private func makeBrowserRendition(_ size: PixelSize, loop: FrameLoop, webrtc: WebRTCOutput) throws -> Encoder {
        let picture = try RenditionPicture(scene: renderer.scene, size: size, fps: options.fps, warn: { _ in })
        picture.share(renderer)
        picture.warmUp()
        var settings = options.encoder
        settings.bitrate = 0
        let encoder = try makeEncoder(fixed: nil, liveSize: size, rawCaps: picture.caps, settings: settings)
        webrtc.offer(size, from: encoder)
        loop.adopt(picture)
        return encoder
    }

    /// Browsers that follow their windows get renditions made for them, dropped once none sees them.
    func followBrowserWindows() {
        servers.first(WebRTCOutput.self)?.onPictureUnused = { [weak self] size in self?.dropBrowserRendition(size) }
    }

    /// Drops a rendition made for windows once no browser sees it (its encoder drained off the frame loop).
    func dropBrowserRendition(_ size: PixelSize) {
        guard let browser = servers.windows, let webrtc = servers.first(WebRTCOutput.self), let loop else { return }
        let events = self.events
        browser.drop(size, stillWanted: { webrtc.watchedRenditions.contains(size) }, takeAway: { webrtc.withdraw(size) },
                     retire: { loop.retire(size, then: $0) },
                     done: { events.publish(.renditionDropped(size: size, reason: "no browser sees it")) })
    }
}
