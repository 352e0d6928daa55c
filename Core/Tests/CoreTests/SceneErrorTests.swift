import Foundation
import Testing
import TestSupport
@testable import CompositorCore

@Suite struct SceneErrorTests {
    func error(_ yaml: String) -> SceneError? {
        do {
            _ = try SceneLoader.parse(yaml, file: "bad.yaml", checks: NoMediaChecks())
            return nil
        } catch {
            return error
        }
    }

    @Test func syntaxErrorNamesFileLineColumnAndWhatWasExpected() throws {
        let e = try #require(error("""
        title: x
        widgets:
          - type: clock
            format: "HH:mm
        """))
        #expect(e.file == "bad.yaml")
        #expect(e.line == 4)
        #expect(e.description.hasPrefix("bad.yaml:4:"))
        #expect(e.message.contains("syntax error"))
        let e2 = try #require(error("widgets:\n  - type: clock\n   place: top\n"))
        #expect(e2.line == 3)
        #expect(e2.description.contains("expected"))
        let tab = try #require(error("widgets:\n\t- type: clock\n"))
        #expect(tab.line == 2)
        #expect(tab.message.contains("tabs"))
    }

    @Test func unknownWidgetTypeListsTheValidOnes() throws {
        let e = try #require(error("widgets:\n  - type: clok\n"))
        #expect(e.line == 2 && e.column == 11)
        #expect(e.path == "widgets[0].type")
        #expect(e.message.contains("unknown widget type 'clok'"))
        #expect(e.message.contains("clock, ticker, nowplaying, image, text, timecode"))
    }

    @Test func unknownKeyIsNamedWithTheValidKeys() throws {
        let e = try #require(error("widgets:\n  - type: ticker\n    sped: 3\n"))
        #expect(e.line == 3 && e.column == 5)
        #expect(e.message.contains("unknown key 'sped'"))
        #expect(e.message.contains("speed"))
        let top = try #require(error("titel: x\nwidgets: []\n"))
        #expect(top.message.contains("unknown key 'titel'") && top.message.contains("title"))
        #expect(top.message.contains("(did you mean 'title'?)"), "\(top.message)")
    }

    /// The keys listed are the widget type's own, each once (they were every type's keys, 'text', 'source' and
    /// 'fit' several times over), with where a key that is not the type's belongs.
    @Test func anUnknownWidgetKeyListsThatTypesKeysAndWhereItBelongs() throws {
        let sped = try #require(error("widgets:\n  - type: ticker\n    sped: 3\n"))
        #expect(sped.message.contains("unknown key 'sped' in a ticker widget (did you mean 'speed'?); valid keys: "
                                      + (SceneLoader.widgetKeys + TickerConfig.keys.map(\.name)).joined(separator: ", ")),
                "\(sped.message)")
        #expect(!sped.message.contains("artist"), "\(sped.message)")
        let path = try #require(error("widgets:\n  - type: image\n    path: /a.png\n"))
        #expect(path.line == 3 && path.column == 5 && path.message.contains("source") && !path.message.contains("items"),
                "\(path.message)")
        let font = try #require(error("widgets:\n  - type: text\n    text: hi\n    font: Sans 12\n"))
        #expect(font.message.hasSuffix("; 'font' belongs under 'style:'"), "\(font.message)")
        let edge = try #require(error("widgets:\n  - type: clock\n    edge: top\n"))
        #expect(edge.message.hasSuffix("; 'edge' belongs under 'place:'"), "\(edge.message)")
        let items = try #require(error("widgets:\n  - type: clock\n    items: [a]\n"))
        #expect(items.message.hasSuffix("; 'items' is a key of ticker widgets"), "\(items.message)")
        let untyped = try #require(error("widgets:\n  - path: /a.png\n"))
        #expect(untyped.message.contains("missing 'type'"), "\(untyped.message)")
    }

    @Test func wrongValuesGiveTheKeyPathAndTheAcceptedRange() throws {
        let fps = try #require(error("fps: 0\nwidgets: []\n"))
        #expect(fps.path == "fps" && fps.line == 1 && fps.column == 6)
        #expect(fps.message.contains("1...120"))
        let colour = try #require(error("widgets:\n  - type: clock\n    style: {color: \"#zz\"}\n"))
        #expect(colour.path == "widgets[0].style.color")
        #expect(colour.message.contains("'#zz' is not a colour"))
        #expect(colour.message.contains("#rrggbb"))
        let pad = try #require(error("widgets:\n  - type: clock\n    style:\n      padding: -4\n"))
        #expect(pad.path == "widgets[0].style.padding" && pad.line == 4)
        #expect(pad.message.contains("0...500"))
        let notNumber = try #require(error("fps: fast\nwidgets: []\n"))
        #expect(notNumber.message.contains("expected a whole number"))
        let zone = try #require(error("widgets:\n  - type: clock\n    timezone: Mars/Olympus\n"))
        #expect(zone.message.contains("IANA"))
        let dup = try #require(error("widgets:\n  - {id: a, type: clock}\n  - {id: a, type: text}\n"))
        #expect(dup.message.contains("duplicate widget id 'a'") && dup.line == 3)
        let strip = try #require(error("widgets:\n  - {type: timecode, place: left}\n"))
        #expect(strip.message.contains("top or bottom"))
    }

    @Test func badSizesAreRefusedWithTheRule() throws {
        for (text, words) in [("0x720", "positive"), ("-2x4", "positive"), ("abc", "WIDTHxHEIGHT"),
                              ("7682x4320", "largest"), ("1281x720", "even for 4:2:0 video; use 1282x720"), ("8x8", "smallest")] {
            #expect(throws: RenderSize.Invalid.self) { try RenderSize.parse(text) }
            do { _ = try RenderSize.parse(text) } catch {
                #expect(error.description.contains(words), "\(text): \(error)")
            }
        }
        #expect(try RenderSize.parse("2160x3840") == PixelSize(width: 2160, height: 3840))
        #expect(try RenderSize.parse("7680x4320") == PixelSize(width: 7680, height: 4320))
        let e = try #require(error("size: 1281x720\nwidgets: []\n"))
        #expect(e.path == "size" && e.message.contains("even"))
    }

    @Test func invalidUTF8IsLocated() throws {
        let dir = try TempDir()
        var bytes = Array("title: ok\nwidgets:\n  - type: text\n    text: caf".utf8)
        bytes += [0xC3, 0x28]
        bytes += Array("\n".utf8)
        let path = dir.file("latin1.yaml")
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        do {
            _ = try SceneLoader.load(path: path, checks: NoMediaChecks())
            Issue.record("loaded a file with invalid UTF-8")
        } catch {
            #expect(error.line == 4 && error.column == 14)
            #expect(error.message.contains("UTF-8"))
        }
    }

    @Test func missingFileAndEmptySceneAreClear() throws {
        do { _ = try SceneLoader.load(path: "/nonexistent/scene.yaml", checks: NoMediaChecks()); Issue.record("no error") } catch {
            #expect(error.description.contains("/nonexistent/scene.yaml") && error.message.contains("no such file"))
        }
        let e = try #require(error(""))
        #expect(e.message.contains("empty"))
    }

    @Test func jsonIsAccepted() throws {
        let s = try scene(#"{"title": "J", "fps": 25, "widgets": [{"type": "clock", "timezone": "UTC"}]}"#)
        #expect(s.title == "J" && s.fps == 25 && s.widgets.count == 1)
        let bad = try #require(error(#"{"widgets": [{"type": "clock" "x": 1}]}"#))
        #expect(bad.line == 1 && bad.column == 31)
        #expect(bad.message.contains("expected ',' or '}'"))
    }
}
