import Foundation

/// Live data for a ticker: lines appended to a watched text file, or read from standard input, scroll in.
/// The ticker keeps the newest `maxItems` items, so a file or pipe that grows forever costs bounded memory.
///
/// `@unchecked Sendable`: `timer` and `lastContents` are touched only on `queue`; `append` goes to the frame loop.
public final class TickerFeed: @unchecked Sendable {
    public static let maxItems = 50
    let session: LiveSession
    let widgetID: String
    private var timer: DispatchSourceTimer?
    private var lastContents: [String] = []
    private let queue = DispatchQueue(label: "ticker-feed")

    public init(session: LiveSession, widgetID: String) throws(ControlError) {
        guard let spec = session.renderer.scene.widgets.first(where: { $0.id == widgetID }) else {
            throw .notFound("no widget '\(widgetID)' to feed; widgets: \(session.renderer.scene.widgets.map(\.id).joined(separator: ", "))")
        }
        guard spec.config is TickerConfig else { throw .bad("widget '\(widgetID)' is not a ticker") }
        self.session = session
        self.widgetID = widgetID
    }

    /// Adds one item at the end (the running loop finishes first).
    public func append(_ line: String) {
        let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty, let loop = session.loop else { return }
        let id = widgetID
        // The items are worked out once, from the main picture's ticker (run first); the renditions, and any made
        // later, get the same list.
        let worked = ItemList()
        loop.change(widget: id, properties: ["items"]) { renderer, media in
            guard let ticker = renderer.widget(id: id) as? TickerWidget else { return }
            let items = worked.items ?? Array((ticker.config.items + [text]).suffix(Self.maxItems))
            worked.items = items
            ticker.replaceItems(items, at: media)
        }
        session.events.publish(.widgetUpdated(id: id, properties: ["items"]))
    }

    /// Makes the ticker show the file's lines, and follows the file as it changes (checked every 250 ms:
    /// a missing file is waited for, a truncated one restarts).
    public func watch(path: String) {
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now(), repeating: .milliseconds(250))
        t.setEventHandler { [weak self] in self?.check(path) }
        t.resume()
        timer = t
    }

    private func check(_ path: String) {
        guard let data = FileManager.default.contents(atPath: path) else { return }
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let items = Array(lines.suffix(Self.maxItems))
        guard items != lastContents, let loop = session.loop else { return }
        lastContents = items
        let id = widgetID
        loop.change(widget: id, properties: ["items"]) { renderer, media in
            (renderer.widget(id: id) as? TickerWidget)?.replaceItems(items, at: media)
        }
        session.events.publish(.widgetUpdated(id: id, properties: ["items"], source: path))
    }

    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
        }
    }
}

/// A ticker's items as the main picture's ticker worked them out; only touched on the frame loop's thread.
private final class ItemList {
    var items: [String]?
}
