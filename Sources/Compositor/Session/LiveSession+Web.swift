import Foundation

/// Web widgets: their pages served (PageServer) and run (PageProcess), the CasparCG calls made into them, and what
/// `window.pipcompose` tells them.
extension LiveSession {
    /// The pages of the web widgets, from `start()` until `stop()`.
    var pages: [PageProcess] { inputs.of(PageSet.self).flatMap(\.pages) }

    /// What `window.pipcompose` says now: the page's size, the picture's, the viewers, whether it plays, and what
    /// the now-playing card shows.
    func pageState(_ size: PixelSize?) -> String {
        let picture = (loop?.stats ?? FrameLoop.Stats()).size
        var fields = ["\"viewers\":\(servers.viewerCount)", "\"playing\":\(!playback.isPaused)",
                      "\"pictureWidth\":\(picture.width)", "\"pictureHeight\":\(picture.height)"]
        if let size { fields += ["\"width\":\(size.width)", "\"height\":\(size.height)"] }
        if let card = inputs.nowPlaying,
           let json = try? JSONEncoder().encode(["title": card.title, "artist": card.artist, "album": card.album]) {
            fields.append("\"nowPlaying\":" + String(decoding: json, as: UTF8.self))
        }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Tells every page what changed (once a second, with the drop watch); the now-playing card is read on the
    /// render thread, which alone touches it, for the next time (pages, and `GET /v1/nowplaying`).
    func tellPages() {
        if renderer.scene.widgets.contains(where: { $0.config is NowPlayingConfig }) {
            loop?.perform { [weak self] renderer, _ in
                guard let card = renderer.widgets.lazy.compactMap({ $0 as? NowPlayingWidget }).first else { return }
                self?.inputs.nowPlaying = card.config
            }
        }
        for page in pages { page.tell(pageState(page.frames.pageSize)) }
    }

    /// A preview with data: the scene as it stands now (its size, scene time and clock) drawn with web widget `id`'s
    /// template given `data`, in pages of its own (loaded fresh, as `snapshot` loads them); the live page never sees
    /// it. As PNG.
    public func webSnapshot(id: String, data: String, size: PixelSize?) async throws(ControlError) -> Data {
        var snapshot = Snapshot(scene: options.scene, size: size ?? (loop?.stats ?? FrameLoop.Stats()).size,
                                at: loop.map { playback.media(at: $0.runningSeconds) } ?? 0, wall: Date())
        snapshot.web = options.web
        do { try snapshot.give(data: data, toWebWidget: id) } catch {
            throw error.description.hasPrefix("no widget") ? .notFound(error.description) : .bad(error.description)
        }
        let log = self.log, job = Handover(snapshot)
        let result: Result<Data, Error> = await withCheckedContinuation { done in
            DispatchQueue.global().async {
                let snapshot = job.value
                let path = NSTemporaryDirectory() + "pipcompose-preview-\(UUID().uuidString).png"
                defer { try? FileManager.default.removeItem(atPath: path) }
                done.resume(returning: Result {
                    try snapshot.write(to: path, warn: { log("web preview: \($0)") })
                    return try Data(contentsOf: URL(fileURLWithPath: path))
                })
            }
        }
        switch result {
        case .success(let png): return png
        case .failure(let e): throw .conflict("the preview could not be drawn: \(e)")
        }
    }

    /// A CasparCG call on web widget `id`: update (with data: JSON or CasparCG's `<templateData>` XML), play,
    /// next, stop, remove; reload; or invoke NAME. Answers what the page said within 3 s.
    public func webCall(id: String, call: String, data: String?, name: String?) async throws(ControlError) -> String {
        let all = pages
        guard let page = all.first(where: { $0.id == id }) else {
            throw .notFound("no web widget '\(id)'; web widgets: "
                            + (all.isEmpty ? "none" : all.map(\.id).joined(separator: ", ")))
        }
        let function: String, argument: String?
        switch call {
        case "update":
            guard let data else { throw .bad("update needs data: JSON such as {\"f0\":\"Jane\"}, or <templateData> XML") }
            let text = data.trimmingCharacters(in: .whitespacesAndNewlines)
            if text.hasPrefix("{") || text.hasPrefix("[") {
                guard (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil else {
                    throw .bad("update's data is not valid JSON: \(text.prefix(60))")
                }
            } else if !text.hasPrefix("<") {
                throw .bad("update takes JSON ({\"f0\":\"Jane\"}) or CasparCG's <templateData> XML, got '\(text.prefix(40))'")
            }
            (function, argument) = ("update", text)
        case "play", "next", "stop", "remove": (function, argument) = (call, nil)
        case "reload":
            page.reload()
            return "reloading"
        case "invoke":
            guard let name, !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" }) else {
                throw .bad("invoke needs the name of one of the page's functions (letters, digits, _)")
            }
            (function, argument) = (name, data)
        default:
            throw .bad("'\(call)' is not a call; use update, play, next, stop, remove, reload or invoke")
        }
        switch await page.call(function, argument) {
        case .done: return "done"
        case .posted: return "posted"
        case .noAnswer: return "sent; the page has not answered yet"
        case .failed(let why):
            events.publish(.pageError(id: id, message: why))
            throw .unprocessable("web '\(id)': \(why)")
        case .notRunning(let why): throw .conflict("web '\(id)': \(why)")
        }
    }
}
