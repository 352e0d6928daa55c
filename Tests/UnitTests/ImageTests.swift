import CPango
import CRsvg
import Foundation
import Testing
import TestSupport
@testable import Compositor

@Suite struct ImageTests {
    /// Writes a 40x20 image, left half red, right half blue, in `type` ("png" or "jpeg") with gdk-pixbuf.
    func writeImage(_ path: String, type: String) throws {
        let s = try ImageSurface(width: 40, height: 20)
        let c = Canvas(surface: s)
        c.paint(Rect(x: 0, y: 0, width: 20, height: 20), Color(red: 1, green: 0, blue: 0))
        c.paint(Rect(x: 20, y: 0, width: 20, height: 20), Color(red: 0, green: 0, blue: 1))
        if type == "png" {
            try s.writePNG(to: path)
            return
        }
        // Through PNG into gdk-pixbuf, then out as JPEG.
        let png = path + ".png"
        try s.writePNG(to: png)
        var err: UnsafeMutablePointer<GError>?
        let pixbuf = try #require(gdk_pixbuf_new_from_file(png, &err))
        defer { g_object_unref(UnsafeMutableRawPointer(pixbuf)) }
        let ok = gdk_pixbuf_savev(pixbuf, path, "jpeg", nil, nil, &err)
        #expect(ok != 0)
    }

    func render(_ source: String, fit: ImageFit, warnings: inout [String]) throws -> (ImageWidget, ImageSurface) {
        var c = ImageWidget.Config()
        c.source = source
        c.fit = fit
        var style = Style()
        style.padding = 0
        var collected: [String] = []
        let w = ImageWidget(id: "img", style: style, config: c, warn: { collected.append($0) })
        let s = try drawAlone(w, size: PixelSize(width: 200, height: 100), box: Rect(x: 0, y: 0, width: 200, height: 100),
                              at: time(0))
        warnings += collected
        return (w, s)
    }

    @Test(arguments: ["png", "jpeg"])
    func rasterImagesFitFillAndCenter(type: String) throws {
        let dir = try TempDir()
        let path = dir.file("img.\(type)")
        try writeImage(path, type: type)
        var warnings: [String] = []
        // fit: 40x20 scaled to 200x100 fills the box exactly.
        let (w, fitted) = try render(path, fit: .fit, warnings: &warnings)
        #expect(w.isLoaded)
        #expect(fitted.pixel(x: 20, y: 50).r > 200 && fitted.pixel(x: 180, y: 50).b > 200)
        // center: natural size in the middle, black around.
        let (_, centered) = try render(path, fit: .center, warnings: &warnings)
        #expect(centered.pixel(x: 10, y: 50) == (0, 0, 0, 255))
        #expect(centered.pixel(x: 85, y: 50).r > 200 && centered.pixel(x: 115, y: 50).b > 200)
        #expect(warnings.isEmpty)
    }

    @Test func svgIsRenderedAtTheSizeItIsDrawn() throws {
        let dir = try TempDir()
        let path = try dir.write("a.svg", """
        <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="#00ff00"/></svg>
        """)
        var warnings: [String] = []
        let (w, s) = try render(path, fit: .fit, warnings: &warnings)
        #expect(w.isLoaded && warnings.isEmpty)
        // A 10x10 SVG fitted to 100x100, crisp edge: fully green just inside, black just outside.
        #expect(s.pixel(x: 51, y: 50).g == 255 && s.pixel(x: 148, y: 99).g == 255)
        #expect(s.pixel(x: 49, y: 50) == (0, 0, 0, 255) && s.pixel(x: 151, y: 50) == (0, 0, 0, 255))
    }

    /// librsvg shapes text with its thread's default Pango font map, which kept the fonts of every scale it drew at:
    /// a frame loop drawing a logo at a size per browser window held about 65 KiB more for each (issue 52's hour).
    @Test func svgTextLeavesNoFontMapHoldingItsScalesOnItsThread() throws {
        let dir = try TempDir()
        let path = try dir.write("t.svg", """
        <svg xmlns="http://www.w3.org/2000/svg" width="100" height="40"><rect width="100" height="40" fill="#000000"/>\
        <text x="50" y="30" font-family="Noto Sans" font-size="28" fill="#ffffff" text-anchor="middle">PiP</text></svg>
        """)
        let picture = try Picture.load(path: path)
        for width in stride(from: 100, through: 190, by: 10) {
            let height = width * 2 / 5
            let held = UnsafeMutableRawPointer(pango_cairo_font_map_get_default())
            g_object_ref(held)
            defer { g_object_unref(held) }
            let surface = try ImageSurface(width: width, height: height)
            picture.draw(on: Canvas(surface: surface), in: Rect(x: 0, y: 0, width: Double(width), height: Double(height)),
                         fit: .fit)
            surface.flush()
            let ink = (0..<height).contains { y in (0..<width).contains { surface.pixel(x: $0, y: y).r > 200 } }
            #expect(ink, "no text drawn at \(width)x\(height)")
            #expect(UnsafeMutableRawPointer(pango_cairo_font_map_get_default()) != held,
                    "the font map that drew at \(width)x\(height) is still its thread's default")
        }
    }

    @Test func missingOrUndecodableImagesWarnAndDrawAPlaceholder() throws {
        let dir = try TempDir()
        let garbage = try dir.write("broken.png", "this is not a png")
        let empty = try dir.write("empty.jpg", "")
        for (path, words) in [(dir.file("missing.png"), "no such file"), (garbage, "broken.png"), (empty, "empty")] {
            var warnings: [String] = []
            let (w, s) = try render(path, fit: .fit, warnings: &warnings)
            #expect(!w.isLoaded)
            #expect(warnings.count == 1 && warnings[0].contains(path) && warnings[0].contains(words), "\(warnings)")
            #expect(warnings[0].contains("placeholder"))
            #expect(litPixels(s, Rect(x: 0, y: 0, width: 200, height: 100)) > 200, "a placeholder is drawn")
        }
    }
}
