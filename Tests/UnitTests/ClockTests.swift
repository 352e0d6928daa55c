import Foundation
import Testing
@testable import Compositor

@Suite struct ClockTests {
    func clock(_ format: String = "HH:mm:ss", zone: String = "Asia/Tokyo", date: String? = nil) -> ClockWidget {
        var c = ClockWidget.Config()
        c.format = format
        c.timezone = zone
        c.dateFormat = date
        return ClockWidget(id: "clock", style: Style(), config: c)
    }

    @Test func formatsTheInjectedTimeInItsZone() {
        #expect(clock().timeText(at: fixedWall) == "14:06:07")
        #expect(clock(zone: "Europe/Paris").timeText(at: fixedWall) == "06:06:07")
        #expect(clock(zone: "America/New_York").timeText(at: fixedWall) == "00:06:07")
        #expect(clock(date: "yyyy-MM-dd").dateText(at: fixedWall) == "2026-03-04")
    }

    @Test func drawsExactlyTheTextOfTheInjectedTime() throws {
        let size = PixelSize(width: 640, height: 200)
        let box = Rect(x: 0, y: 0, width: 640, height: 200)
        let engine = TextEngine()
        let w = clock()
        let drawn = try drawAlone(w, size: size, box: box, at: time(0), engine: engine)
        // The same text laid out by hand at the same size and place gives the same pixels.
        let reference = try ImageSurface(width: 640, height: 200)
        let canvas = Canvas(surface: reference)
        canvas.paint(size.rect, .black)
        let layout = TextLayout(engine: engine, text: "14:06:07", font: Style().font, pixelSize: w.timeSize,
                                width: w.content.width, alignment: .center)
        let y = w.content.y + (w.content.height - layout.height) / 2
        layout.draw(on: canvas, x: w.content.x, y: y, color: .white)
        #expect(litPixels(drawn, box) > 500)
        #expect(difference(drawn, reference, in: box).count == 0)
        // A different second draws differently; the same second, half a second later, identically.
        let later = try drawAlone(w, size: size, box: box, at: time(0, wall: fixedWall + 1), engine: engine)
        let half = try drawAlone(w, size: size, box: box, at: time(0, wall: fixedWall + 0.5), engine: engine)
        #expect(difference(later, drawn, in: box).count > 0)
        #expect(difference(half, drawn, in: box).count == 0)
    }

    /// A time is never cut short ("15:49:…" was drawn for HH:mm:ss.SSS in a wide, low box): it shrinks instead.
    @Test(arguments: [(480, 200), (1280, 500), (320, 300), (160, 40)])
    func aLongTimeShrinksToFitAndIsNeverEllipsized(width: Int, height: Int) {
        let w = clock("HH:mm:ss.SSS")
        let box = Rect(x: 0, y: 0, width: Double(width), height: Double(height))
        let engine = TextEngine()
        w.layout(box: box, frame: PixelSize(width: width, height: height), engine: engine)
        let layout = TextLayout(engine: engine, text: "08:48:38.888", font: Style().font, pixelSize: w.timeSize,
                                width: w.content.width, alignment: .center)
        #expect(!layout.isEllipsized, "\(width)x\(height): \(w.timeSize) px")
        #expect(w.textBoxes.allSatisfy { w.box.contains($0, tolerance: 0.5) })
    }

    @Test func knowsWhenItsTextNextChanges() {
        let t = fixedWall + 0.25
        #expect(clock().nextChange(after: t) == fixedWall + 1)
        #expect(clock("HH:mm").nextChange(after: t) == fixedWall + 53)
        // Hours in a zone with a half-hour offset change at :30 UTC.
        let india = clock("HH", zone: "Asia/Kolkata")
        let next = india.nextChange(after: t)
        #expect(india.timeText(at: next) != india.timeText(at: next - 0.001))
        #expect(india.timeText(at: next - 0.001) == india.timeText(at: t))
        #expect(clock("HH:mm 'o''clock'").nextChange(after: t) == fixedWall + 53)
    }

    @Test func appearanceChangesOnlyWithTheText() {
        let w = clock()
        #expect(w.appearance(at: time(0)) == w.appearance(at: time(5, wall: fixedWall + 0.9)))
        #expect(w.appearance(at: time(0)) != w.appearance(at: time(0, wall: fixedWall + 1)))
    }
}
