import Foundation
import Testing
import TestSupport
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

    /// A second's redraw is the time's digits, not the whole box, and leaves exactly the pixels of a whole redraw: across
    /// seconds, a minute, an hour and midnight (the date line changes: the whole box), in a few formats and zones, with
    /// and without a rounded panel and a border, at several sizes.
    @Test(arguments: [
        ("HH:mm:ss", "EEEE d MMMM yyyy", "{bold: true, padding: 8}", 1280),
        ("h:mm:ss a", "yyyy-MM-dd", "{background: \"#ffffff30\", radius: 24, border: \"#ff0000\", padding: 4}", 960),
        ("HH:mm:ss.SS", "", "{background: \"#000000cc\", radius: 12, padding: 6}", 640),
        ("HH:mm:ss", "", "{italic: true, padding: 2}", 320),
    ])
    func partialRedrawsLeaveThePixelsOfAWholeOne(format: String, date: String, style: String, width: Int) throws {
        let yaml = """
        size: \(width)x\(width * 9 / 16)
        background: {gradient: ["#0b1a2e", "#1d3557"], angle: 90}
        widgets:
          - {id: clock, type: clock, format: "\(format)", timezone: UTC, place: {edge: top, size: 0.3}, style: \(style)\(
              date.isEmpty ? "" : ", date: \"\(date)\"")}
        """
        let s = try scene(yaml)
        let renderer = Renderer(scene: s, size: s.size)
        let reference = Renderer(scene: s, size: s.size)
        let surface = try ImageSurface(width: s.size.width, height: s.size.height)
        let canvas = Canvas(surface: surface)
        let box = try #require(renderer.layout.boxes["clock"]).integral
        // 23:58:57.5 UTC for 5 s (past seconds and a minute), then 23:59:58.5 for 5 s (midnight: the hour, the
        // date line and, for "h:mm:ss a", the width of the text change); a frame every 0.25 s, so that hundredths
        // change every frame.
        let midnight = Date(timeIntervalSince1970: 1_772_600_767 - (5 * 3600 + 6 * 60 + 7) + 86400)
        var partial = 0, whole = 0
        for f in 0..<40 {
            let wall = midnight - (f < 20 ? 62.5 : 1.5) + Double(f % 20) * 0.25
            let t = time(0, wall: wall, frame: Int64(f))
            let damage = renderer.render(on: canvas, at: t)
            if f > 0 {
                #expect(damage.allSatisfy { box.contains($0, tolerance: 0) }, "frame \(f): \(damage)")
                for d in damage { if d.width * d.height < box.width * box.height / 2 { partial += 1 } else { whole += 1 } }
            }
            let full = try reference.snapshot(at: t)
            let diff = difference(full, surface, in: s.size.rect)
            #expect(diff.count == 0, "frame \(f) differs in \(String(describing: diff.bounds)) after redrawing \(damage)")
        }
        #expect(partial >= 3, "\(partial) partial redraws, \(whole) whole")
        // Midnight changes the date line: that second is drawn whole.
        if !date.isEmpty { #expect(whole >= 1, "\(partial) partial redraws, \(whole) whole") }
    }
}
