import CPango
import Foundation
import Testing
import TestSupport
@testable import Compositor

@Suite struct RendererTests {
    /// A renderer resized to a size draws what one made at that size draws: a probe that joins after a resize, or a
    /// window's rendition made beside the main picture, compares with or shows the same picture. (The ticker's first
    /// loop started from the band's width in whole pixels at the first size: 1360 pixels of its text differed.)
    @Test(arguments: ["demo", "info-panel.yaml"])
    func aResizedRendererDrawsWhatAFreshOneDraws(scene name: String) throws {
        let scene = name == "demo" ? DemoScene.load() : try SceneLoader.load(path: examplesDir + "/" + name)
        let resized = Renderer(scene: scene, size: PixelSize(width: 480, height: 270))
        _ = try resized.snapshot(at: time(0.1))
        let size = PixelSize(width: 320, height: 180)
        resized.resize(to: size)
        let t = time(95.0 / 30, wall: fixedWall + 3, frame: 95)
        let diff = difference(try resized.snapshot(at: t), try Renderer(scene: scene, size: size).snapshot(at: t), in: size.rect)
        #expect(diff.count == 0, "differs in \(String(describing: diff.bounds))")
    }

    /// Going back and forth between a few sizes lays every text out in one font map, and a picture dragged through
    /// many sizes lets go of the fonts of those it left: a font map keeps the fontsets, fonts and patterns of every
    /// size it was asked for (the demo visiting 24 sizes in turn with one map: glibc's heaps 9.3 → 24.3 MiB).
    @Test(arguments: ["demo", "info-panel.yaml"])
    func aPictureDraggedThroughManySizesLetsGoOfTheirFonts(scene name: String) throws {
        let scene = name == "demo" ? DemoScene.load() : try SceneLoader.load(path: examplesDir + "/" + name)
        let first = PixelSize(width: 1280, height: 720), second = PixelSize(width: 1024, height: 576)
        let renderer = Renderer(scene: scene, size: first)
        var frame: Int64 = 0
        func draw() throws {
            frame += 3
            _ = try renderer.snapshot(at: time(Double(frame) / 30, wall: fixedWall + Double(frame) / 30, frame: frame))
        }
        try draw()
        weak var engine = renderer.engine
        let map = try #require(UnsafeMutableRawPointer(pango_context_get_font_map(renderer.engine.context)))
            .assumingMemoryBound(to: GObject.self)
        let watch = UnsafeMutablePointer<gpointer?>.allocate(capacity: 1)
        defer { watch.deallocate() }
        watch.initialize(to: UnsafeMutableRawPointer(map))
        g_object_add_weak_pointer(map, watch)
        defer { if watch.pointee != nil { g_object_remove_weak_pointer(map, watch) } }
        for _ in 0..<20 {
            renderer.resize(to: second); try draw()
            renderer.resize(to: first); try draw()
        }
        #expect(renderer.engine === engine, "two sizes in turn started a fresh font map")
        // Sizes of their own, as a window being dragged: the map serves `sizesPerEngine` sizes (two so far), then a
        // fresh one.
        let dragged = (1...Renderer.sizesPerEngine - 1).map { PixelSize(width: 640 + 32 * $0, height: (640 + 32 * $0) * 9 / 16) }
        for size in dragged.dropLast(1) { renderer.resize(to: size); try draw() }
        #expect(renderer.engine === engine && watch.pointee != nil, "a fresh font map before the map had its sizes")
        renderer.resize(to: dragged.last!); try draw()
        #expect(engine == nil, "the engine of 8 sizes, asked for a 9th, is still alive")
        #expect(watch.pointee == nil, "the font map of the sizes left is still alive")
        // What the fresh map draws is what a renderer made at that size draws.
        let t = time(Double(frame + 3) / 30, wall: fixedWall + Double(frame + 3) / 30, frame: frame + 3)
        let size = dragged.last!
        let diff = difference(try renderer.snapshot(at: t), try Renderer(scene: scene, size: size).snapshot(at: t), in: size.rect)
        #expect(diff.count == 0, "differs in \(String(describing: diff.bounds))")
    }

    /// A probe draws every reference frame on one surface: what was on it before (another moment, a picture left
    /// half drawn by a partial redraw) must not show through, for a plain and a gradient background.
    @Test(arguments: ["demo", "info-panel.yaml"])
    func aSnapshotIntoAUsedSurfaceIsAFreshSnapshot(scene name: String) throws {
        let scene = name == "demo" ? DemoScene.load() : try SceneLoader.load(path: examplesDir + "/" + name)
        let size = PixelSize(width: 640, height: 360)
        let renderer = Renderer(scene: scene, size: size)
        let used = try ImageSurface(width: size.width, height: size.height)
        Canvas(surface: used).paint(size.rect, Color(red: 1, green: 0, blue: 1))
        renderer.snapshot(at: time(3.5, wall: fixedWall + 3.5), into: used)
        let later = time(7.25, wall: fixedWall + 61.25, frame: 217)
        renderer.snapshot(at: later, into: used)
        let fresh = try Renderer(scene: scene, size: size).snapshot(at: later)
        let diff = difference(fresh, used, in: size.rect)
        #expect(diff.count == 0, "differs in \(String(describing: diff.bounds))")
    }

    @Test func onlyChangedWidgetsAreRedrawn() throws {
        let renderer = Renderer(scene: DemoScene.load(), size: PixelSize(width: 1280, height: 720))
        let surface = try ImageSurface(width: 1280, height: 720)
        let canvas = Canvas(surface: surface)
        let first = renderer.render(on: canvas, at: time(0.2))
        #expect(first == [PixelSize(width: 1280, height: 720).rect])
        // Same instant again: nothing changed, nothing drawn.
        #expect(renderer.render(on: canvas, at: time(0.2)).isEmpty)
        // One frame later within the same second: only the ticker's text moved (its panel's padding did not).
        let next = renderer.render(on: canvas, at: time(0.2 + 1 / 30.0, wall: fixedWall + 0.033))
        let memo = try #require(renderer.widget(id: "memo") as? TickerWidget)
        #expect(next == [memo.content.integral])
        // The ticker's strips go straight into the frame's I420 (FrameProducerTests compares those bytes); drawn
        // into the canvas when it is read, the partial redraw leaves exactly the pixels a full redraw would.
        #expect(renderer.direct.map(\.region) == [memo.content.integral])
        renderer.materializeDirect(on: canvas)
        let full = try renderer.snapshot(at: time(0.2 + 1 / 30.0, wall: fixedWall + 0.033))
        let all = PixelSize(width: 1280, height: 720).rect
        let diff = difference(full, surface, in: all)
        #expect(diff.count == 0, "differs in \(String(describing: diff.bounds))")
    }

    /// A ticker over a plain band (the demo: a panel over a top-to-bottom gradient) is copied into place each
    /// frame from strips blended over the band once; over a diagonal gradient (the info panel) the band differs
    /// along each row, and the ticker blends its text over it every frame. Either way, frame after frame, the
    /// picture is what a full redraw gives.
    /// With `direct`, the strips the renderer leaves for the I420 frame are drawn into the canvas after each frame
    /// (only where the ticker's content box is whole pixels: at 960x540 its padding is 4.5 pixels).
    @Test(arguments: [("demo", true, false, 960), ("demo", true, true, 960), ("demo", true, true, 640),
                      ("info-panel.yaml", false, true, 960)])
    func aScrollingTickerLeavesThePixelsOfAFullRedraw(scene name: String, plainBand: Bool, direct: Bool, width: Int) throws {
        let scene = name == "demo" ? DemoScene.load() : try SceneLoader.load(path: examplesDir + "/" + name)
        let size = PixelSize(width: width, height: width * 9 / 16)
        let renderer = Renderer(scene: scene, size: size)
        renderer.writesStripsDirectly = direct
        let reference = Renderer(scene: scene, size: size)
        let surface = try ImageSurface(width: size.width, height: size.height)
        let canvas = Canvas(surface: surface)
        let ticker = try #require(renderer.widgets.first { $0 is TickerWidget } as? TickerWidget)
        for f in 0..<40 {
            let t = time(Double(f) / 30, wall: fixedWall + Double(f) / 30, frame: Int64(f))
            renderer.render(on: canvas, at: t)
            if f > 0 { #expect(ticker.paintsOpaquely(ticker.content, at: t) == plainBand) }
            let whole = ticker.content == ticker.content.integral
            if f > 0 { #expect(renderer.direct.isEmpty == !(direct && plainBand && whole), "frame \(f)") }
            renderer.materializeDirect(on: canvas)
            let full = try reference.snapshot(at: t)
            let diff = difference(full, surface, in: size.rect)
            #expect(diff.count == 0, "frame \(f) differs in \(String(describing: diff.bounds))")
        }
    }

    @Test func resizeReLaysOutAndRedrawsWhole() throws {
        let renderer = Renderer(scene: DemoScene.load(), size: PixelSize(width: 1280, height: 720))
        let landscape = renderer.layout.boxes
        renderer.resize(to: PixelSize(width: 480, height: 854))
        #expect(renderer.size == PixelSize(width: 480, height: 854))
        #expect(renderer.layout.boxes != landscape)
        #expect(renderer.layout.boxes.values.allSatisfy { PixelSize(width: 480, height: 854).rect.contains($0) })
        let surface = try ImageSurface(width: 480, height: 854)
        let damage = renderer.render(on: Canvas(surface: surface), at: time(0))
        #expect(damage == [PixelSize(width: 480, height: 854).rect])
    }

    @Test func pausedSceneTimeFreezesAnimationButNotTheClock() throws {
        let renderer = Renderer(scene: DemoScene.load(), size: PixelSize(width: 640, height: 360))
        let surface = try ImageSurface(width: 640, height: 360)
        let canvas = Canvas(surface: surface)
        renderer.render(on: canvas, at: time(5))
        // Scene time stands at 5 s while the wall clock moves 2 s: only the clock redraws (its time's digits).
        let damage = renderer.render(on: canvas, at: time(5, wall: fixedWall + 2))
        let clock = renderer.layout.boxes["clock"]!.integral
        #expect(damage.count == 1 && damage.allSatisfy { clock.contains($0, tolerance: 0) && $0.height < clock.height })
    }

    @Test func backgroundImageThatFailsWarnsAndFallsBack() throws {
        var warnings: [String] = []
        let s = try scene("background: {image: /nope/bg.png, color: \"#123456\"}\nwidgets: []\n",
                          checks: MediaChecksLive())
        let r = Renderer(scene: s, size: PixelSize(width: 64, height: 64), warn: { warnings.append($0) })
        let surface = try r.snapshot(at: time(0))
        #expect(warnings.count == 1 && warnings[0].contains("/nope/bg.png"))
        #expect(surface.pixel(x: 10, y: 10) == (0x12, 0x34, 0x56, 255))
    }
}
