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

/// A web widget's source: a file below the scene's folder, or an http(s) URL whose host resolves.
@Suite struct WebSchemaTests {
    /// A URL's host checked as a run checks it, without the network: names under `.invalid` (RFC 2606) do not
    /// resolve; files and pictures unchecked. The system's resolver is the rendering side's (MediaChecksLive).
    struct Resolving: MediaChecks {
        func pictureProblem(_ path: String) -> String? { nil }
        func videoProblem(_ uri: String) -> String? { nil }
        func missingFonts(in family: String) -> [String] { [] }
        func hostProblem(_ host: String) -> String? {
            host.hasSuffix(".invalid") ? "the host '\(host)' does not resolve (Name or service not known)" : nil
        }
    }

    func refusal(_ widget: String, folder: String) -> String {
        do {
            _ = try SceneLoader.parse("widgets: [\(widget)]", file: "s.yaml", baseDirectory: folder, checks: Resolving())
            return ""
        } catch { return error.message }
    }

    @Test func badSourcesAreRefusedWithWhatToDo() throws {
        let dir = try TempDir()
        let scene = dir.file("scene")
        try FileManager.default.createDirectory(atPath: scene, withIntermediateDirectories: true)
        _ = try dir.write("outside.html", "<p>")
        _ = try dir.write("scene/page.html", "<p>")
        #expect(refusal("{type: web}", folder: scene).contains("needs 'source'"))
        #expect(refusal("{type: web, source: page.html, html: '<p>'}", folder: scene).contains("not both"))
        #expect(refusal("{type: web, source: missing.html}", folder: scene).contains("no such file"))
        #expect(refusal("{type: web, source: ../outside.html}", folder: scene).contains("outside the scene's folder"))
        #expect(refusal("{type: web, source: 'ftp://example.com/x'}", folder: scene).contains("http(s) URL"))
        #expect(refusal("{type: web, source: 'https://pipcompose.invalid/x'}", folder: scene).contains("does not resolve"))
        #expect(refusal("{type: web, source: page.html, fps: 0}", folder: scene).contains("1...120"))
        #expect(refusal("{type: web, source: page.html, fps: 1000}", folder: scene).contains("1...120"))
        let s = try SceneLoader.parse("widgets: [{type: web, source: page.html, data: {f0: Jane, list: [a, b]}}]",
                                      file: "s.yaml", baseDirectory: scene, checks: Resolving())
        let web = try #require(s.widgets.first?.config as? WebConfig)
        #expect(web.source == .file(path: "page.html", folder: URL(fileURLWithPath: scene).resolvingSymlinksInPath().path))
        let data = try #require(web.data.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(data["f0"] as? String == "Jane" && (data["list"] as? [String]) == ["a", "b"])
        #expect(web.renew)
        let kept = try SceneLoader.parse("widgets: [{type: web, source: page.html, renew: false}]",
                                         file: "s.yaml", baseDirectory: scene, checks: Resolving())
        #expect((kept.widgets.first?.config as? WebConfig)?.renew == false)
        #expect(refusal("{type: web, source: page.html, renew: sometimes}", folder: scene).contains("true or false"))
    }
}
