import Foundation
import Testing
@testable import Compositor

@Suite struct TickerTests {
    let size = PixelSize(width: 1280, height: 720)
    let box = Rect(x: 0, y: 600, width: 1280, height: 80)

    func ticker(speed: Double = 100, items: [String] = ["Alpha news item", "ベータ 二番目", "Gamma ✓"]) -> TickerWidget {
        var c = TickerWidget.Config()
        c.items = items
        c.speed = speed
        var style = Style()
        style.padding = 0
        return TickerWidget(id: "memo", style: style, config: c)
    }

    /// The horizontal shift that best maps band `a` onto band `b` (b = a moved left by the shift).
    func shift(from a: ImageSurface, to b: ImageSurface, maxShift: Int) -> (Int, Double) {
        let pa = pixels(a, box), pb = pixels(b, box)
        let w = Int(box.width), h = Int(box.height)
        var best = (0, Double.infinity)
        for s in 0...maxShift {
            var diff = 0, n = 0
            for y in Swift.stride(from: 0, to: h, by: 2) {
                for x in 0..<(w - s) {
                    diff += abs(Int(pb[(y * w + x) * 4 + 1]) - Int(pa[(y * w + x + s) * 4 + 1]))
                    n += 1
                }
            }
            let mean = Double(diff) / Double(n)
            if mean < best.1 { best = (s, mean) }
        }
        return best
    }

    @Test func movesByTheExpectedPixelsBetweenTwoTimes() throws {
        let engine = TextEngine()
        let w = ticker()
        let a = try drawAlone(w, size: size, box: box, at: time(2.0), engine: engine)
        let b = try drawAlone(w, size: size, box: box, at: time(2.5), engine: engine)
        #expect(litPixels(a, box) > 1000)
        // 100 px/s at a 720-high picture, half a second apart: 50 pixels to the left.
        let (s, err) = shift(from: a, to: b, maxShift: 120)
        #expect(s == 50)
        #expect(err < 0.5)
        // Scaled picture (360 high): the speed scales with it, 25 pixels.
        let small = PixelSize(width: 640, height: 360)
        let sbox = Rect(x: 0, y: 300, width: 640, height: 40)
        let w2 = ticker()
        let c = try drawAlone(w2, size: small, box: sbox, at: time(2.0), engine: engine)
        let d = try drawAlone(w2, size: small, box: sbox, at: time(2.5), engine: engine)
        let pc = pixels(c, sbox), pd = pixels(d, sbox)
        let rowBytes = Int(sbox.width) * 4
        var matches = true
        for y in 0..<Int(sbox.height) {
            let rc = Array(pc[(y * rowBytes + 25 * 4)..<((y + 1) * rowBytes)])
            let rd = Array(pd[(y * rowBytes)..<((y + 1) * rowBytes - 25 * 4)])
            if rc != rd { matches = false }
        }
        #expect(matches)
    }

    @Test func loopsSeamlessly() throws {
        let engine = TextEngine()
        let w = ticker()
        _ = try drawAlone(w, size: size, box: box, at: time(0), engine: engine)
        let loop = TextLayout(engine: engine, text: w.loopText(w.config.items), font: w.style.font,
                              pixelSize: 10).width  // any size: only to prove the loop text is not empty
        #expect(loop > 0)
        // Find the loop's period from the widget's own layout, then check the picture repeats after it.
        let period = loopPeriod(w, engine: engine)
        let a = try drawAlone(w, size: size, box: box, at: time(1), engine: engine)
        let b = try drawAlone(w, size: size, box: box, at: time(1 + period / 100), engine: engine)
        let (s, err) = shift(from: a, to: b, maxShift: 0)
        #expect(s == 0 && err < 1.0)
    }

    func loopPeriod(_ w: TickerWidget, engine: TextEngine) -> Double {
        let sample = TextLayout(engine: engine, text: "Ag漢字", font: w.style.font, pixelSize: 100)
        let size = max(4, (w.content.height / (sample.height / 100)).rounded(.down))
        return TextLayout(engine: engine, text: w.loopText(w.config.items), font: w.style.font, pixelSize: size).width
    }

    @Test func replacingTheTextDoesNotJump() throws {
        let engine = TextEngine()
        let w = ticker()
        let before = try drawAlone(w, size: size, box: box, at: time(3), engine: engine)
        w.replaceItems(["Completely different text", "новый текст"], at: 3)
        let after = try drawAlone(w, size: size, box: box, at: time(3), engine: engine)
        #expect(difference(before, after, in: box).count == 0)
        // Later the new text has scrolled in: the band looks different from the old loop at that time.
        let old = ticker()
        let oldLater = try drawAlone(old, size: size, box: box, at: time(40), engine: engine)
        let newLater = try drawAlone(w, size: size, box: box, at: time(40), engine: engine)
        #expect(difference(oldLater, newLater, in: box).count > 0)
    }

    @Test func itemsThatChangeFasterThanALoopScrollsQueueNothing() throws {
        let engine = TextEngine()
        let w = ticker()
        _ = try drawAlone(w, size: size, box: box, at: time(3), engine: engine)
        // A feed that changes 100 times before the first change's loop could enter the band: each takes the place of
        // the one waiting, so the ticker holds the loop on screen and one waiting, and the newest is what comes next.
        for i in 0..<100 { w.replaceItems(["update \(i)", "更新 \(i)"], at: 3 + Double(i) / 1000) }
        #expect(w.loopsHeld == 2)
        let newest = ticker()
        _ = try drawAlone(newest, size: size, box: box, at: time(3), engine: engine)
        newest.replaceItems(["update 99", "更新 99"], at: 3)
        let a = try drawAlone(w, size: size, box: box, at: time(40), engine: engine)
        let b = try drawAlone(newest, size: size, box: box, at: time(40), engine: engine)
        #expect(difference(a, b, in: box).count == 0)
        #expect(litPixels(a, box) > 0)
    }

    @Test func standsStillWhenSceneTimeStandsStill() {
        let w = ticker()
        let engine = TextEngine()
        w.layout(box: box, frame: size, engine: engine)
        #expect(w.appearance(at: time(5)) == w.appearance(at: time(5, wall: fixedWall + 10)))
        #expect(w.appearance(at: time(5)) != w.appearance(at: time(5.1)))
    }

    @Test func emptyAndHugeItemsAreHandled() throws {
        let engine = TextEngine()
        let empty = ticker(items: [])
        let e = try drawAlone(empty, size: size, box: box, at: time(1), engine: engine)
        #expect(litPixels(e, box) == 0)
        let huge = ticker(items: [String(repeating: "長い文章 long text ", count: 7000)])
        let h = try drawAlone(huge, size: size, box: box, at: time(1), engine: engine)
        #expect(litPixels(h, box) > 1000)
    }
}
