import Foundation
import Testing
import TestSupport
@testable import CompositorCore

let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
    .deletingLastPathComponent().path

/// The widget schemas: one place for a type's keys, read alike from a scene and a live update, shown in the docs.
@Suite struct WidgetSchemaTests {
    /// docs/SCENE.md shows each type's keys as the schema has them (`pipcompose widgets --fill docs/SCENE.md`).
    @Test func theScenePagesKeyTablesAgreeWithTheSchemas() throws {
        let path = repositoryRoot + "/docs/SCENE.md"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for schema in WidgetTypes.all {
            #expect(text.contains("<!-- keys:\(schema.type) -->") && text.contains("<!-- /keys:\(schema.type) -->"),
                    "docs/SCENE.md has no key table for \(schema.type)")
        }
        #expect(WidgetTypes.fillMarkdown(text) == text,
                "docs/SCENE.md's key tables differ from the schemas: run `pipcompose widgets --fill docs/SCENE.md`")
    }

    @Test func everyTypeHasUniqueKeysDocumentedAndDistinctFromEveryWidgetsOwn() {
        #expect(Set(WidgetTypes.names).count == WidgetTypes.all.count)
        for schema in WidgetTypes.all {
            let names = schema.keys.map(\.name)
            #expect(Set(names).count == names.count, "\(schema.type)")
            #expect(Set(names).isDisjoint(with: SceneLoader.widgetKeys), "\(schema.type)")
            for k in schema.keys { #expect(!k.doc.isEmpty && !k.type.isEmpty, "\(schema.type).\(k.name)") }
        }
    }

    /// A value refused in a scene is refused in a live update, by the same rule.
    @Test func aSceneAndALiveUpdateShareEachKeysRules() throws {
        func sceneError(_ yaml: String) -> String {
            do { _ = try scene(yaml); return "" } catch let e as SceneError { return e.message } catch { return "\(error)" }
        }
        func liveError<C: WidgetConfig>(_ type: C.Type, _ body: [String: JSONValue]) -> String {
            do { _ = try C.change(LiveFields(body: body, context: SceneContext(folder: "/"))); return "" } catch {
                return error.message
            }
        }
        #expect(sceneError("widgets: [{type: clock, timezone: Mars/Base}]").contains("unknown timezone 'Mars/Base'"))
        #expect(liveError(ClockConfig.self, ["timezone": .string("Mars/Base")]).contains("unknown timezone 'Mars/Base'"))
        #expect(sceneError("widgets: [{type: nowplaying, duration: -1}]").contains("0...604800"))
        #expect(liveError(NowPlayingConfig.self, ["duration": .number(-1)]).contains("0...604800"))
        #expect(sceneError("widgets: [{type: video, source: \"test:nope\"}]").contains("unknown test pattern 'nope'"))
        #expect(liveError(VideoConfig.self, ["source": .string("test:nope")]).contains("unknown test pattern 'nope'"))
        #expect(sceneError("widgets: [{type: video, source: test, opacity: 2}]").contains("0...1"))
        #expect(liveError(VideoConfig.self, ["opacity": .number(2)]).contains("0...1"))
    }

    /// Relative paths are taken from the scene's folder, whichever way they come.
    @Test func relativePathsResolveAgainstTheScenesFolderInBothPaths() throws {
        let s = try scene("widgets: [{id: a, type: image, source: pics/a.png}, {id: n, type: nowplaying, artwork: c.svg}]",
                          folder: "/scenes/panel")
        #expect((s.widgets[0].config as? ImageConfig)?.source == "/scenes/panel/pics/a.png")
        #expect((s.widgets[1].config as? NowPlayingConfig)?.artwork == "/scenes/panel/c.svg")
        #expect(s.folder == "/scenes/panel")
        let context = SceneContext(folder: s.folder)
        let image = try ImageConfig.change(LiveFields(body: ["source": .string("pics/b.png")], context: context))
        #expect((image as? ImageConfig.Change)?.source == "/scenes/panel/pics/b.png")
        let card = try NowPlayingConfig.change(LiveFields(body: ["artwork": .string("builtin:cover")], context: context))
        #expect((card as? NowPlayingConfig.Change)?.artwork == .some("builtin:cover"))
    }

    @Test func defaultsComeFromTheSchema() throws {
        let s = try scene("widgets: [{type: clock}, {type: ticker}, {type: timecode}, {type: video, source: test}]")
        #expect(s.widgets[0].placement == ClockConfig.placement)
        #expect(s.widgets[1].placement == TickerConfig.placement)
        #expect(s.widgets[2].style == TimecodeConfig.style && s.widgets[2].placement.bleed)
        #expect(s.widgets[3].style.padding == 0)
        #expect(s.widgets.map(\.id) == ["clock1", "ticker2", "timecode3", "video4"])
        #expect((s.widgets[0].config as? ClockConfig) == ClockConfig())
    }
}
