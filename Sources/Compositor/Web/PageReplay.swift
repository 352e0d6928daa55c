import Foundation

/// What a web widget's page was told through the CasparCG calls, kept so that a page started again (its process
/// crashed, hung, passed the memory limit, or `ctl web ID reload`) comes back showing what it showed, not the scene's
/// first data: its data (the scene's `data:` and every `update` since, a JSON object's fields merged, the newest
/// winning; anything else, such as `<templateData>` XML, the last one as it was) and whether it was played or stopped.
/// `next()` and calls by name are not replayed.
///
/// `@unchecked Sendable`: everything is behind `lock` (the page's queue writes, the page server reads).
final class PageReplay: @unchecked Sendable {
    private let lock = NSLock()
    private var data: String?
    private var playing = true
    /// Bumped by every call that changes what a page loaded now is given.
    private var version = 0

    init(data: String?) { self.data = data }

    /// A call sent to the page.
    func called(_ name: String, _ argument: String?) {
        lock.withLock {
            if ["update", "play", "stop", "remove"].contains(name) { version += 1 }
            switch name {
            case "update": if let argument { data = Self.merge(data, argument) }
            case "play": playing = true
            case "stop", "remove": playing = false
            default: break
            }
        }
    }

    /// What a page loaded now is given: its data, and whether `play()` follows it.
    var state: (data: String?, playing: Bool) { lock.withLock { (data, playing) } }

    /// The same, and a number that changes whenever it does (a page loaded before may have missed a call).
    var versioned: (data: String?, playing: Bool, version: Int) { lock.withLock { (data, playing, version) } }

    /// `new`'s fields over `old`'s when both are JSON objects, else `new`.
    static func merge(_ old: String?, _ new: String) -> String {
        guard let old, let a = object(old), let b = object(new),
              let merged = try? JSONSerialization.data(withJSONObject: a.merging(b) { $1 }, options: [.sortedKeys])
        else { return new }
        return String(decoding: merged, as: UTF8.self)
    }

    private static func object(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }
}
