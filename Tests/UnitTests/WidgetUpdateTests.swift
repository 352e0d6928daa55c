import Foundation
import Testing
@testable import Compositor

/// Widget changes are checked off the render thread against the scene alone, then applied on it.
@Suite struct WidgetUpdateTests {
    let scene: Scene

    init() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples").path
        scene = try SceneLoader.load(path: dir + "/info-panel.yaml")
    }

    func refusal(_ id: String, _ body: [String: JSONValue]) -> String? {
        do { _ = try WidgetUpdate.prepare(scene: scene, id: id, body: body); return nil } catch { return error.message }
    }

    @Test func unknownWidgetsPropertiesAndTypesAreRefusedWithWhatIsAllowed() {
        #expect(refusal("nope", ["text": .string("x")])?.contains("widgets:") == true)
        #expect(refusal("memo", ["txt": .string("x")])?.contains("it takes: items, text") == true)
        #expect(refusal("memo", ["items": .string("x")])?.contains("list of strings") == true)
        #expect(refusal("memo", [:])?.contains("no properties") == true)
        #expect(refusal("np", ["position": .number(-1)])?.contains("must be in") == true)
        #expect(refusal("np", ["playing": .number(1)])?.contains("true or false") == true)
        #expect(refusal("np", ["artwork": .string("/no/such.png")]) != nil)
    }

    @Test func aNowPlayingChangeMergesIntoTheCardOnTheRenderThread() throws {
        let renderer = Renderer(scene: scene, size: PixelSize(width: 640, height: 360))
        let card = try #require(renderer.widget(id: "np") as? NowPlayingWidget)
        let before = card.config
        let change = try WidgetUpdate.prepare(scene: scene, id: "np",
                                              body: ["title": .string("Song"), "duration": .number(100), "position": .number(40)])
        change(renderer, 10)
        #expect(card.config.title == "Song")
        #expect(card.config.artist == before.artist, "what was not given stays")
        #expect(abs(card.position(at: 10) - 40) < 0.001)
    }

    @Test func commandLineValuesBecomeJSON() {
        #expect(JSONValue.parse(commandLine: "12.5") == .number(12.5))
        #expect(JSONValue.parse(commandLine: "true") == .bool(true))
        #expect(JSONValue.parse(commandLine: #"["a","b"]"#) == .array([.string("a"), .string("b")]))
        #expect(JSONValue.parse(commandLine: #"a\nb"#) == .string("a\nb"))
    }
}
