import Foundation
import Testing
import TestSupport
@testable import Compositor

let examplesDir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("examples").path

/// Landscape, portrait and square, from 160x90 to 3840x2160.
let layoutSizes: [PixelSize] = [
    (160, 90), (320, 180), (480, 270), (1280, 720), (1920, 1080), (3840, 2160),
    (90, 160), (360, 640), (1080, 1920), (2160, 3840), (200, 200), (1080, 1080),
].map { PixelSize(width: $0.0, height: $0.1) }

@Suite struct LayoutTests {
    func scenes() throws -> [(String, Scene)] {
        var out = [("demo", DemoScene.load())]
        for name in ["info-panel.yaml", "timecode.yaml", "finite-slideshow.json"] {
            out.append((name, try SceneLoader.load(path: examplesDir + "/" + name)))
        }
        return out
    }

    @Test(arguments: layoutSizes)
    func nothingOverlapsAndNoTextLeavesItsBox(size: PixelSize) throws {
        for (name, scene) in try scenes() {
            let renderer = Renderer(scene: scene, size: size)
            let boxes = renderer.layout.boxes
            #expect(!boxes.isEmpty, "\(name) at \(size): nothing visible")
            let ids = boxes.keys.sorted()
            for id in ids {
                let box = boxes[id]!
                #expect(size.rect.contains(box, tolerance: 0.01), "\(name) \(size): \(id) \(box) leaves the picture")
                #expect(box.width >= 1 && box.height >= 1, "\(name) \(size): \(id) is empty")
            }
            for (i, a) in ids.enumerated() {
                for b in ids[(i + 1)...] {
                    #expect(!boxes[a]!.intersects(boxes[b]!), "\(name) \(size): \(a) \(boxes[a]!) overlaps \(b) \(boxes[b]!)")
                }
            }
            // Draw a frame so every widget lays out its text for real.
            _ = try renderer.snapshot(at: time(12))
            for w in renderer.widgets where boxes[w.id] != nil {
                for t in w.textBoxes {
                    #expect(w.box.contains(t, tolerance: 0.5), "\(name) \(size): text \(t) leaves \(w.id) \(w.box)")
                    #expect(t.height >= 6 || t.width == 0, "\(name) \(size): text in \(w.id) is \(t.height) px high")
                }
            }
        }
    }

    @Test func theDemoShowsItsThreeWidgetsFromTinyTo4K() {
        for size in layoutSizes {
            let r = Renderer(scene: DemoScene.load(), size: size)
            #expect(Set(r.layout.boxes.keys) == ["clock", "memo", "nowplaying"], "\(size): \(r.layout.hidden) hidden")
        }
    }

    @Test func tickerKeepsAReadableHeight() {
        for size in layoutSizes {
            let r = Renderer(scene: DemoScene.load(), size: size)
            #expect(r.layout.boxes["memo"]!.height >= 14, "\(size)")
        }
    }

    func card(_ size: PixelSize, _ box: Rect) -> NowPlayingWidget {
        var c = NowPlayingWidget.Config()
        c.title = "Title"
        c.artist = "Artist"
        c.album = "Album"
        c.artwork = "builtin:cover"
        c.duration = 200
        let w = NowPlayingWidget(id: "np", style: Style(), config: c, warn: { _ in })
        w.layout(box: box, frame: size, engine: TextEngine())
        return w
    }

    @Test func nowPlayingDropsArtworkThenAlbumAsItShrinks() throws {
        let big = card(PixelSize(width: 1280, height: 720), Rect(x: 0, y: 0, width: 900, height: 300))
        #expect(big.artBox != nil)
        #expect(big.shownLines == ["Title", "Artist", "Album", "progress"])
        // Square-ish: artwork on top of the text, all lines.
        let square = card(PixelSize(width: 1280, height: 720), Rect(x: 0, y: 0, width: 300, height: 200))
        let art = try #require(square.artBox)
        #expect(square.textBoxes.allSatisfy { $0.minY >= art.maxY })
        #expect(square.shownLines == ["Title", "Artist", "Album", "progress"])
        // Small: the artwork would squeeze the lines, so it goes first; all lines stay.
        let narrow = card(PixelSize(width: 1280, height: 720), Rect(x: 0, y: 0, width: 150, height: 120))
        #expect(narrow.artBox == nil)
        #expect(narrow.shownLines.contains("Album"))
        // Low: album goes before artist.
        let low = card(PixelSize(width: 320, height: 180), Rect(x: 0, y: 0, width: 300, height: 42))
        #expect(low.artBox == nil)
        #expect(!low.shownLines.contains("Album"))
        #expect(low.shownLines.contains("Title"))
    }

    @Test func nowPlayingGoesVerticalInPortrait() {
        let w = card(PixelSize(width: 720, height: 1280), Rect(x: 0, y: 0, width: 600, height: 900))
        let art = try! #require(w.artBox)
        // Artwork above the text, centred.
        #expect(w.textBoxes.allSatisfy { $0.minY >= art.maxY })
        #expect(abs(art.midX - 300) < 1)
    }

    @Test func lowPriorityWidgetsHideFirstWhenThereIsNoRoom() throws {
        let s = try scene("""
        widgets:
          - {id: a, type: text, text: A, place: {edge: top, size: 0.3, min: 40, priority: 5}}
          - {id: b, type: text, text: B, place: {edge: top, size: 0.3, min: 40, priority: -5}}
          - {id: c, type: clock, place: {edge: fill}}
        """)
        let big = Renderer(scene: s, size: PixelSize(width: 640, height: 360))
        #expect(big.layout.hidden.isEmpty)
        let small = Renderer(scene: s, size: PixelSize(width: 160, height: 90))
        #expect(small.layout.hidden.first == "b")
        #expect(small.layout.boxes["a"] != nil)
    }
}

extension Rect {
    var midX: Double { x + width / 2 }
}
