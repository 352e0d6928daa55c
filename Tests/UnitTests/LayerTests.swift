import Foundation
import Testing
import TestSupport
@testable import Compositor

/// Floating widgets (a background, insets) with z order: where they go, how they are refused, and that drawing
/// only what changed leaves the pixels of a full redraw when layers overlap.
@Suite struct LayerTests {
    static let red = Color(red: 1, green: 0, blue: 0), green = Color(red: 0, green: 1, blue: 0)
    static let blue = Color(red: 0, green: 0, blue: 1), yellow = Color(red: 1, green: 1, blue: 0)
    static let gray = Color(red: 0.5, green: 0.5, blue: 0.5)

    /// A solid BGRx frame for a video layer's slot.
    func frame(_ size: PixelSize, _ c: Color) throws -> MediaBuffer {
        Gst.initialize()
        let px = UInt32(0xFF00_0000) | UInt32(c.red * 255) << 16 | UInt32(c.green * 255) << 8 | UInt32(c.blue * 255)
        return try #require(MediaBuffer.filled(bytes: size.width * size.height * 4) { raw in
            let words = raw.bindMemory(to: UInt32.self)
            for i in words.indices { words[i] = px }
        })
    }

    /// Puts the same input frame in the slot of layer `id` of every renderer, at the size the layer asks for
    /// (as its input would).
    func feed(_ renderers: [Renderer], _ id: String, _ c: Color, time t: Double) throws {
        for r in renderers {
            let w = try #require(r.widget(id: id) as? VideoWidget)
            let size = try #require(w.slot.wanted)
            w.slot.put(try frame(size, c), size: size, at: t)
        }
    }

    let layered = """
    size: 640x360
    background: "#203040"
    widgets:
      - {id: bg, type: video, source: "test:smpte", place: background}
      - {id: title, type: text, text: "OVER THE VIDEO", style: {color: "#ffffff", background: "#00000066"}, place: {edge: top, size: 0.2}}
      - {id: memo, type: ticker, items: ["The first item of the memo, long enough to fill the band", "二番目の項目", "the third one"], style: {background: "#00000088"}}
      - {id: pip, type: video, source: "test:ball", place: {inset: top-right, width: 0.3, margin: 0.02}}
      - {id: tc, type: timecode}
    """

    @Test func aBackgroundTakesTheWholePictureAndAnInsetFloatsInsideThePadding() throws {
        let s = try scene(layered)
        let size = PixelSize(width: 640, height: 360)
        let r = Renderer(scene: s, size: size)
        let boxes = r.layout.boxes
        #expect(boxes["bg"] == size.rect)
        // Docked widgets dock as if the floating ones were not there.
        let plain = Renderer(scene: try scene(layered.replacingOccurrences(of: "  - {id: bg", with: "  # ")
            .replacingOccurrences(of: "  - {id: pip", with: "  # ")), size: size)
        for id in ["title", "memo", "tc"] { #expect(boxes[id] == plain.layout.boxes[id], "\(id)") }
        // 30 % of 640 wide, 16:9, in the top-right corner: padding 2 % of 360 (7 px) plus a margin of 7 px.
        let pip = try #require(boxes["pip"])
        #expect(pip == Rect(x: 640 - 14 - 192, y: 14, width: 192, height: 108), "\(pip)")
        #expect(s.widgets.map(\.z) == [-1, 0, 0, 1, 0])
    }

    @Test func anInsetStaysAboveTheTimecodeStripAndFollowsItsPortraitPlace() throws {
        let s = try scene("""
        widgets:
          - {id: tc, type: timecode, place: {edge: bottom}}
          - {id: pip, type: video, source: test, place: {inset: bottom-left, width: 0.5, aspect: "4:3", portrait: {inset: top, width: 0.8}}}
        """)
        let land = Renderer(scene: s, size: PixelSize(width: 1280, height: 720)).layout.boxes
        let strip = try #require(land["tc"]), pip = try #require(land["pip"])
        #expect(pip.maxY <= strip.minY && pip.x == 14 && abs(pip.width / pip.height - 4.0 / 3.0) < 0.02, "\(pip) \(strip)")
        let tall = Renderer(scene: s, size: PixelSize(width: 720, height: 1280)).layout.boxes
        let p2 = try #require(tall["pip"])
        #expect(p2.y == 14 && p2.width == 576 && abs(p2.midX - 360) < 1, "\(p2)")
        // Too small for its minimum: hidden, the rest stays.
        let tiny = Renderer(scene: try scene("""
        widgets:
          - {id: pip, type: video, source: test, place: {inset: center, width: 0.05, min: 40}}
          - {id: t, type: text, text: hi}
        """), size: PixelSize(width: 320, height: 180)).layout
        #expect(tiny.hidden == ["pip"] && tiny.boxes["t"] != nil)
    }

    @Test func zOrderDecidesWhatIsOnTop() throws {
        let yaml = """
        size: 320x180
        background: "#000000"
        widgets:
          - {id: under, type: video, source: test, z: Z, place: {inset: center, width: 0.5}}
          - {id: label, type: text, text: "████████", style: {color: "#00ff00", background: "#00ff00"}, place: fill}
        """
        let size = PixelSize(width: 320, height: 180)
        for (z, expectRed) in [(-5, false), (5, true)] {
            let r = Renderer(scene: try scene(yaml.replacingOccurrences(of: "Z", with: String(z))), size: size)
            try feed([r], "under", Self.red, time: 0)
            let surface = try r.snapshot(at: time(0))
            let mid = pixels(surface, Rect(x: 160, y: 90, width: 1, height: 1))
            // BGRx: red has its third byte lit, green its second.
            #expect((mid[2] > 200 && mid[1] < 50) == expectRed, "z \(z): \(mid)")
        }
    }

    /// A video background changing under a translucent ticker and a text, an inset changing on its own, and the
    /// ticker scrolling: frame after frame, the picture drawn from the damage alone is what a full redraw gives.
    @Test func redrawingOnlyWhatChangedOverLayersLeavesTheFullRedrawsPixels() throws {
        let s = try scene(layered)
        let size = PixelSize(width: 640, height: 360)
        let live = Renderer(scene: s, size: size)
        let reference = Renderer(scene: s, size: size)
        let surface = try ImageSurface(width: size.width, height: size.height)
        let canvas = Canvas(surface: surface)
        let colours: [Color] = [Self.red, Self.green, Self.blue, Self.yellow, .white, Self.gray]
        for f in 0..<36 {
            // The background changes every third frame, the inset every second, the ticker moves every frame.
            if f % 3 == 0 { try feed([live, reference], "bg", colours[(f / 3) % colours.count], time: Double(f)) }
            if f % 2 == 0 { try feed([live, reference], "pip", colours[(f / 2 + 3) % colours.count], time: Double(f)) }
            let t = time(Double(f) / 30, wall: fixedWall + Double(f) / 30, frame: Int64(f))
            let damage = live.render(on: canvas, at: t)
            if f > 0 && f % 3 == 0 { #expect(damage.contains(size.rect), "frame \(f): the background changed: \(damage)") }
            let full = try reference.snapshot(at: t)
            let diff = difference(full, surface, in: size.rect)
            #expect(diff.count == 0, "frame \(f) differs in \(String(describing: diff.bounds))")
        }
        // The ticker over the video never copies pre-blended strips: what is under it changes.
        let memo = try #require(live.widget(id: "memo") as? TickerWidget)
        #expect(memo.hasLayerBelow && !memo.paintsOpaquely(memo.content, at: time(1)))
        let pip = try #require(live.widget(id: "pip") as? VideoWidget)
        #expect(pip.hasLayerBelow && pip.paintsOpaquely(pip.content, at: time(1)))
    }

    @Test func badLayerPlacesAreRefusedWithWhatIsExpected() throws {
        func message(_ yaml: String) -> String {
            do { _ = try scene(yaml); return "" } catch { return "\(error)" }
        }
        let anchor = message("widgets:\n  - {type: video, source: test, place: {inset: middle}}\n")
        #expect(anchor.contains("test.yaml:2:") && anchor.contains("'middle'") && anchor.contains("bottom-right"), "\(anchor)")
        let mixed = message("widgets:\n  - {type: video, source: test, place: {inset: top-left, edge: top}}\n")
        #expect(mixed.contains("'edge' belongs to a docked widget"), "\(mixed)")
        let loose = message("widgets:\n  - {type: video, source: test, place: {edge: top, width: 0.3}}\n")
        #expect(loose.contains("'width' belongs to an inset") && loose.contains("inset: top-left"), "\(loose)")
        let aspect = message("widgets:\n  - {type: video, source: test, place: {inset: top, aspect: \"16:0\"}}\n")
        #expect(aspect.contains("expected an aspect ratio such as 16:9"), "\(aspect)")
        let typo = message("widgets:\n  - {type: video, source: test, place: backgruond}\n")
        #expect(typo.contains("'backgruond' is not one of: background, bottom"), "\(typo)")
        let z = message("widgets:\n  - {type: text, text: x, z: high}\n")
        #expect(z.contains("test.yaml:2:") && z.contains("z"), "\(z)")
        let strip = message("widgets:\n  - {type: timecode, place: background}\n")
        #expect(strip.contains("must span the full width"), "\(strip)")
        let fit = message("widgets:\n  - {type: video, source: test, fit: stretch}\n")
        #expect(fit.contains("'stretch' is not one of: center, fill, fit"), "\(fit)")
    }
}
