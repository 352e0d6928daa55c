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
    ///
    /// `at` (not for reload): the call's picture lands on that frame in every output, rendition and recording. The
    /// widget holds the picture it shows from the call on (the page's newer pictures wait), the page is called at
    /// once, and before the frame asked for the hold ends: that frame shows the page as the call left it. A page that
    /// by then has not answered, or drawn nothing since it was called, keeps the hold to the first frame after it has
    /// (a second at most; the event `widgetUpdated` says which frame, the log how late). A frame less than `webNotice` ahead is refused with the
    /// earliest that can be met.
    public func webCall(id: String, call: String, data: String?, name: String?, at moment: ChangeMoment?)
        async throws(ControlError) -> String {
        if let moment { return try await heldWebCall(id: id, call: call, data: data, name: name, at: moment) }
        return try await webCall(id: id, call: call, data: data, name: name)
    }

    /// The notice a web call on a stated frame needs: the page's answer and its next picture.
    static let webNotice = 0.25

    private func heldWebCall(id: String, call: String, data: String?, name: String?, at moment: ChangeMoment)
        async throws(ControlError) -> String {
        guard call != "reload" else { throw .bad("reload starts the page over: it cannot land on a frame") }
        guard let page = pages.first(where: { $0.id == id }), let loop else {
            return try await webCall(id: id, call: call, data: data, name: name)  // says why
        }
        let frames = page.frames, fps = options.scene.fps
        let notice = Int64((Self.webNotice * Double(fps)).rounded(.up))
        if case .frame(let f) = moment, f < Int64(loop.stats.frame) + notice {
            throw .conflict("\(moment) is too near for a web page to draw it: the earliest that can be met is frame "
                            + "\(Int64(loop.stats.frame) + notice) (\(Int(Self.webNotice * 1000)) ms ahead)")
        }
        let mark = HeldCall(drawnSoFar: frames.made)
        frames.hold()
        // Before the frame asked for (and each frame after, until the page has drawn what the call changed).
        func land(at target: ChangeMoment) throws(FrameLoop.ScheduleRefusal) {
            try loop.change(widget: id, properties: [], at: target, landed: { [weak self] n in
                switch mark.settle(drawn: frames.made, frame: n, patience: Int64(fps)) {
                case .wait:
                    try? land(at: .frame(n + 1))
                    return
                case .dropped: return
                case .land: frames.release()
                }
                let late: Int64
                if case .frame(let f) = moment { late = n - f } else { late = 0 }
                self?.events.publish(.widgetUpdated(id: id, properties: ["call:" + call], frame: n))
                if late > 0 {
                    self?.log("web '\(id)': \(call) landed on frame \(n), \(late) late: the page had not drawn since its "
                              + "answer (or drew nothing new)")
                }
            }, { _, _ in })
        }
        do { try land(at: moment) } catch {
            frames.release()
            switch error {
            case .tooNear(let earliest): throw .conflict("\(moment) is too near to be met: the earliest that can be is \(earliest)")
            case .full(let limit): throw .conflict("\(limit) changes wait for their moment already; ask again once some landed")
            }
        }
        do {
            let answer = try await webCall(id: id, call: call, data: data, name: name)
            mark.answered()
            return answer + ", held for \(moment)"
        } catch {
            // No picture of the call to land: what the page shows goes on from now.
            if mark.abandon() { frames.release() }
            throw error
        }
    }

    /// The call made now, answered with what the page said.
    private func webCall(id: String, call: String, data: String?, name: String?) async throws(ControlError) -> String {
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

/// A web call held for a stated frame: the number of the page's newest picture when it was called, and whether it
/// answered. The hold ends once the page has answered and drawn a picture since it was called (a page draws when
/// something changed, often before its answer is back), or at once when the call failed.
///
/// `@unchecked Sendable`: everything is behind `lock`.
final class HeldCall: @unchecked Sendable {
    private let lock = NSLock()
    private let calledAt: UInt64
    private var hasAnswered = false
    private var abandoned = false
    private var landed = false

    init(drawnSoFar: UInt64) { calledAt = drawnSoFar }

    func answered() { lock.withLock { hasAnswered = true } }

    /// The call failed: true when the hold is still on (the caller ends it now), false when it landed already.
    func abandon() -> Bool {
        lock.withLock {
            defer { abandoned = true }
            return !landed && !abandoned
        }
    }

    private var firstTry: Int64?

    enum Settled { case wait, land, dropped }

    /// At frame `frame`, the one asked for or a later one: land now, wait a frame more, or nothing (the call failed
    /// and its hold ended then). It lands once the page has answered and made a picture since it was called, or after
    /// `patience` frames of waiting (a call that changed nothing on the page brings no new picture).
    func settle(drawn: UInt64, frame: Int64, patience: Int64) -> Settled {
        lock.withLock {
            if abandoned { return .dropped }
            if firstTry == nil { firstTry = frame }
            let drew = hasAnswered && drawn > calledAt
            guard drew || frame - firstTry! >= patience else { return .wait }
            landed = true
            return .land
        }
    }
}
