import Foundation
import Testing
import TestSupport
@testable import Compositor

/// The changes a rendition made while running replays to show what the others show (`SceneChangeLog`).
@Suite struct SceneChangeLogTests {
    let scene: Scene

    init() throws {
        scene = try SceneLoader.parse("""
        size: 640x360
        widgets:
          - {id: title, type: text, text: "as loaded", place: {edge: top, size: 0.3}}
          - {id: memo, type: ticker, items: ["one"]}
        """, file: "log.yaml")
    }

    /// A renderer made later, replaying the log, has every widget as the changes left it; a change made moot by a
    /// later one of the same widget and properties is dropped, others stay, and the log never passes its limit.
    @Test func aLaterRendererReplaysTheChangesAndTheLogStaysBounded() throws {
        var log = SceneChangeLog()
        let live = Renderer(scene: scene, size: PixelSize(width: 640, height: 360))
        func change(_ id: String, _ properties: Set<String>, _ apply: @escaping (Renderer, Double) -> Void) {
            let c = SceneChange(widget: id, properties: properties, apply: apply)
            c.apply(live, 1)
            log.record(c, at: 1)
        }
        for i in 0..<1000 {
            // As PATCH /v1/widgets/title makes it.
            change("title", ["text"], try WidgetUpdate.prepare(scene: scene, id: "title", body: ["text": .string("title \(i)")]).apply)
        }
        change("memo", ["items"]) { r, m in (r.widget(id: "memo") as? TickerWidget)?.replaceItems(["two", "three"], at: m) }
        // A thousand changes of one property: one kept.
        #expect(log.count == 2)
        let later = Renderer(scene: scene, size: PixelSize(width: 416, height: 234))
        #expect((later.widget(id: "title") as? TextWidget)?.config.text == "as loaded")
        log.replay(into: later)
        #expect((later.widget(id: "title") as? TextWidget)?.config.text == "title 999")
        #expect((later.widget(id: "memo") as? TickerWidget)?.config.items == ["two", "three"])
        // Changes that never make each other moot: bounded all the same.
        for i in 0..<(SceneChangeLog.limit + 100) {
            log.record(SceneChange(widget: "w\(i)", properties: ["x"], apply: { _, _ in }), at: 2)
        }
        #expect(log.count == SceneChangeLog.limit)
    }
}
