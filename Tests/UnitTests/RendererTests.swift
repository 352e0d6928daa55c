import Foundation
import Testing
@testable import Compositor

@Suite struct RendererTests {
    @Test func onlyChangedWidgetsAreRedrawn() throws {
        let renderer = Renderer(scene: DemoScene.load(), size: PixelSize(width: 1280, height: 720))
        let surface = try ImageSurface(width: 1280, height: 720)
        let canvas = Canvas(surface: surface)
        let first = renderer.render(on: canvas, at: time(0.2))
        #expect(first == [PixelSize(width: 1280, height: 720).rect])
        // Same instant again: nothing changed, nothing drawn.
        #expect(renderer.render(on: canvas, at: time(0.2)).isEmpty)
        // One frame later within the same second: only the ticker moved.
        let next = renderer.render(on: canvas, at: time(0.2 + 1 / 30.0, wall: fixedWall + 0.033))
        #expect(next == [renderer.layout.boxes["memo"]!.integral])
        // The partial redraw leaves exactly the pixels a full redraw would.
        let full = try renderer.snapshot(at: time(0.2 + 1 / 30.0, wall: fixedWall + 0.033))
        let all = PixelSize(width: 1280, height: 720).rect
        let diff = difference(full, surface, in: all)
        #expect(diff.count == 0, "differs in \(String(describing: diff.bounds))")
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
        // Scene time stands at 5 s while the wall clock moves 2 s: only the clock redraws.
        let damage = renderer.render(on: canvas, at: time(5, wall: fixedWall + 2))
        #expect(damage == [renderer.layout.boxes["clock"]!.integral])
    }

    @Test func backgroundImageThatFailsWarnsAndFallsBack() throws {
        var warnings: [String] = []
        let s = try scene("background: {image: /nope/bg.png, color: \"#123456\"}\nwidgets: []\n")
        let r = Renderer(scene: s, size: PixelSize(width: 64, height: 64), warn: { warnings.append($0) })
        let surface = try r.snapshot(at: time(0))
        #expect(warnings.count == 1 && warnings[0].contains("/nope/bg.png"))
        #expect(surface.pixel(x: 10, y: 10) == (0x12, 0x34, 0x56, 255))
    }
}
