import Foundation
import Testing
@testable import Compositor

@Suite struct TextTests {
    let engine = TextEngine()

    @Test(arguments: [
        ("Japanese", "今日の予定: 打ち合わせ"), ("Chinese", "天气晴朗，气温二十二度"),
        ("Arabic", "مرحبا بالعالم"), ("Emoji", "🎬 🎧 ☀️ 👍🏽"), ("Mixed", "Now 再生中 — أغنية 🎵"),
    ])
    func everyScriptFindsAFont(name: String, text: String) throws {
        let layout = TextLayout(engine: engine, text: text, font: FontStyle(), pixelSize: 40)
        #expect(layout.unknownGlyphs == 0, "\(name) has characters no font could draw")
        #expect(layout.width > 40)
        // Ink really lands on the surface.
        let s = try ImageSurface(width: 800, height: 80)
        let c = Canvas(surface: s)
        c.paint(Rect(x: 0, y: 0, width: 800, height: 80), .black)
        layout.draw(on: c, x: 10, y: 10, color: .white)
        #expect(litPixels(s, Rect(x: 0, y: 0, width: 800, height: 80)) > 200)
    }

    @Test func emojiAreDrawnInColour() throws {
        let layout = TextLayout(engine: engine, text: "🍎", font: FontStyle(), pixelSize: 60)
        let s = try ImageSurface(width: 100, height: 100)
        let c = Canvas(surface: s)
        c.paint(Rect(x: 0, y: 0, width: 100, height: 100), .black)
        layout.draw(on: c, x: 10, y: 10, color: .white)
        var coloured = 0
        for y in 0..<100 {
            for x in 0..<100 {
                let p = s.pixel(x: x, y: y)
                if Int(p.r) - Int(p.g) > 60 { coloured += 1 }
            }
        }
        #expect(coloured > 100, "the apple should be red, not a white outline")
    }

    @Test func arabicRunsRightToLeft() {
        let layout = TextLayout(engine: engine, text: "مرحبا", font: FontStyle(), pixelSize: 40, width: 400)
        // Auto direction: an Arabic paragraph is right-aligned in its width.
        #expect(layout.inkRect.x > 200)
    }

    @Test func textWrapsAndEllipsizesInItsBox() throws {
        var c = TextWidget.Config()
        c.text = String(repeating: "A long sentence that has to wrap. ", count: 50)
        var style = Style()
        style.fontSize = 30
        let w = TextWidget(id: "t", style: style, config: c)
        let box = Rect(x: 10, y: 10, width: 400, height: 160)
        _ = try drawAlone(w, size: PixelSize(width: 1280, height: 720), box: box, at: time(0), engine: engine)
        #expect(w.lineCount >= 2)
        #expect(w.isEllipsized)
        #expect(w.textBoxes.allSatisfy { box.contains($0) })
    }

    @Test func emptyHugeAndControlTextAreHandled() throws {
        for text in ["", String(repeating: "x", count: 100_000), "nul\u{0}and\u{7}bell\ttab", "\n\n\n"] {
            var c = TextWidget.Config()
            c.text = text
            let w = TextWidget(id: "t", style: Style(), config: c)
            let box = Rect(x: 0, y: 0, width: 300, height: 120)
            _ = try drawAlone(w, size: PixelSize(width: 640, height: 360), box: box, at: time(0), engine: engine)
            #expect(w.textBoxes.allSatisfy { box.contains($0) })
        }
        let huge = TextLayout(engine: engine, text: String(repeating: "長", count: 100_000), font: FontStyle(),
                              pixelSize: 20)
        #expect(huge.text.count <= TextLayout.maximumCharacters + 1)
    }
}

@Suite struct ViewersPlaceholderTests {
    @Test func theViewerCountFlowsIntoText() throws {
        var c = TextWidget.Config()
        c.text = "{viewers} watching"
        let w = TextWidget(id: "v", style: Style(), config: c)
        let box = Rect(x: 0, y: 0, width: 400, height: 80)
        let engine = TextEngine()
        let none = try drawAlone(w, size: PixelSize(width: 640, height: 360), box: box, at: FrameTime(media: 0, wall: fixedWall),
                                 engine: engine)
        #expect(w.resolved(at: FrameTime(media: 0, wall: fixedWall, viewers: 3)) == "3 watching")
        #expect(w.appearance(at: FrameTime(media: 0, wall: fixedWall, viewers: 3))
                != w.appearance(at: FrameTime(media: 0, wall: fixedWall, viewers: 4)))
        let three = try ImageSurface(width: 640, height: 360)
        let canvas = Canvas(surface: three)
        canvas.paint(PixelSize(width: 640, height: 360).rect, .black)
        w.draw(on: canvas, at: FrameTime(media: 0, wall: fixedWall, viewers: 3))
        #expect(difference(none, three, in: box).count > 0)
        #expect(w.textBoxes.allSatisfy { box.contains($0) })
    }

    /// The filled text is kept between frames: a new count or a new text must still show at once.
    @Test func aNewCountOrTextShowsAtOnce() {
        var c = TextWidget.Config()
        c.text = "{viewers} watching"
        let w = TextWidget(id: "v", style: Style(), config: c)
        func at(_ n: Int) -> String { w.resolved(at: FrameTime(media: 0, wall: fixedWall, viewers: n)) }
        #expect(at(3) == "3 watching")
        #expect(at(4) == "4 watching")
        #expect(at(3) == "3 watching")
        w.setText("{viewers} here, {viewers} counted")
        #expect(at(3) == "3 here, 3 counted")
        w.setText("nobody {counted}")
        #expect(at(3) == "nobody {counted}")
        w.setText("{viewers}")
        #expect(at(0) == "0")
        #expect(w.resolved(at: nil) == "0")
    }
}
