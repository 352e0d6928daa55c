import Foundation
import Testing
import TestSupport
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
        change.apply(renderer, 10)
        #expect(card.config.title == "Song")
        #expect(card.config.artist == before.artist, "what was not given stays")
        #expect(abs(card.position(at: 10) - 40) < 0.001)
    }

    /// A relative path means the same file in a scene and in a live update: the scene's folder, not the folder the
    /// instance was started in.
    @Test func relativePathsInAnUpdateAreTakenFromTheScenesFolder() throws {
        let dir = try TempDir()
        let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples").path
        try FileManager.default.copyItem(atPath: examples + "/logo.svg", toPath: dir.file("logo.svg"))
        try FileManager.default.copyItem(atPath: examples + "/cover.svg", toPath: dir.file("cover.svg"))
        let path = try dir.write("scene.yaml", """
            widgets:
              - {id: pic, type: image, source: logo.svg}
              - {id: np, type: nowplaying, artwork: cover.svg}
              - {id: tv, type: video, source: test}
            """)
        let scene = try SceneLoader.load(path: path)
        #expect((scene.widgets[0].config as? ImageConfig)?.source == dir.file("logo.svg"))
        #expect((scene.widgets[1].config as? NowPlayingConfig)?.artwork == dir.file("cover.svg"))
        #expect(FileManager.default.currentDirectoryPath != dir.path && !FileManager.default.fileExists(atPath: "cover.svg"))
        let image = try WidgetUpdate.prepare(scene: scene, id: "pic", body: ["source": .string("cover.svg")])
        #expect((image.change as? ImageConfig.Change)?.source == dir.file("cover.svg"))
        let card = try WidgetUpdate.prepare(scene: scene, id: "np", body: ["artwork": .string("logo.svg")])
        #expect((card.change as? NowPlayingConfig.Change)?.artwork == .some(dir.file("logo.svg")))
        let cleared = try WidgetUpdate.prepare(scene: scene, id: "np", body: ["artwork": .string("")])
        #expect((cleared.change as? NowPlayingConfig.Change)?.artwork == .some(nil))
        #expect(refusal(in: scene, "pic", ["source": .string("missing.png")])?.contains(dir.file("missing.png")) == true)
        // A video layer's file, too, and a file that holds no video is refused in an update as in a scene.
        let text = try dir.write("notes.mp4", "not a video")
        #expect(refusal(in: scene, "tv", ["source": .string("notes.mp4")])?.contains("video") == true, "\(text)")
    }

    func refusal(in scene: Scene, _ id: String, _ body: [String: JSONValue]) -> String? {
        do { _ = try WidgetUpdate.prepare(scene: scene, id: id, body: body); return nil } catch { return error.message }
    }

    /// Every type a scene may name has a widget that draws it.
    @Test func everyWidgetTypeIsMadeByItsWidget() {
        for schema in WidgetTypes.all { #expect(schema is any WidgetMaking.Type, "\(schema.type)") }
    }

    @Test func commandLineValuesBecomeJSON() {
        #expect(JSONValue.parse(commandLine: "12.5") == .number(12.5))
        #expect(JSONValue.parse(commandLine: "true") == .bool(true))
        #expect(JSONValue.parse(commandLine: #"["a","b"]"#) == .array([.string("a"), .string("b")]))
        #expect(JSONValue.parse(commandLine: #"a\nb"#) == .string("a\nb"))
    }
}
