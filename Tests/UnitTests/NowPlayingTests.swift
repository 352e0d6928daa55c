import Foundation
import Testing
import TestSupport
@testable import Compositor

/// The now-playing card redraws only what moved in its progress row (a time, the end of the bar), and each such
/// partial redraw leaves exactly the pixels of a whole one.
@Suite struct NowPlayingTests {
    static func card(duration: Double, position: Double, width: Int) throws -> (Scene, PixelSize) {
        let yaml = """
        size: \(width)x\(width * 9 / 16)
        background: {gradient: ["#0b1a2e", "#1d3557"], angle: 90}
        widgets:
          - id: np
            type: nowplaying
            title: "Clair de Lune"
            artist: "Claude Debussy"
            album: "Suite bergamasque"
            artwork: "builtin:cover"
            duration: \(duration)
            position: \(position)
            place: fill
            style: {background: "#ffffff14", radius: 18, padding: 18}
        """
        let s = try scene(yaml)
        return (s, s.size)
    }

    /// Ten seconds of a track, frame by frame at 10 fps: a track of minutes and one of hours (its times are wider,
    /// and the bar leaves them room), at several sizes; across the moment the remaining time loses its hour, and
    /// the elapsed time gains one; from the start of a track, where the filled bar is shorter than it is high.
    @Test(arguments: [(300.0, 42.0, 1280), (300.0, 42.0, 640), (300.0, 0.0, 960), (240.0, 10.0, 854),
                      (7200.0, 3590.0, 1280), (40000.0, 3595.0, 640)])
    func partialRedrawsLeaveThePixelsOfAWholeOne(duration: Double, position: Double, width: Int) throws {
        let (s, size) = try Self.card(duration: duration, position: position, width: width)
        let renderer = Renderer(scene: s, size: size)
        let reference = Renderer(scene: s, size: size)
        let surface = try ImageSurface(width: size.width, height: size.height)
        let canvas = Canvas(surface: surface)
        let box = try #require(renderer.layout.boxes["np"])
        var partial = 0
        for f in 0...100 {
            let t = time(Double(f) / 10, frame: Int64(f))
            let damage = renderer.render(on: canvas, at: t)
            if f > 0 {
                #expect(damage.allSatisfy { box.integral.contains($0, tolerance: 0) }, "frame \(f): \(damage)")
                // A few pixels of the bar, or one time: far less than the card's row.
                partial += damage.filter { $0.width < box.width / 3 }.count
            }
            let full = try reference.snapshot(at: t)
            let diff = difference(full, surface, in: size.rect)
            #expect(diff.count == 0, "frame \(f) differs in \(String(describing: diff.bounds)) after redrawing \(damage)")
        }
        // The bar grows a pixel every second or so and each time changes once a second.
        #expect(partial >= 10, "only \(partial) partial redraws")
    }

    /// Pausing changes the glyph: the whole card is redrawn, and still matches.
    @Test func pausingRedrawsTheCardWhole() throws {
        let (s, size) = try Self.card(duration: 300, position: 42, width: 960)
        let renderer = Renderer(scene: s, size: size)
        let surface = try ImageSurface(width: size.width, height: size.height)
        let canvas = Canvas(surface: surface)
        renderer.render(on: canvas, at: time(1))
        var paused = time(1)
        paused.paused = true
        let damage = renderer.render(on: canvas, at: paused)
        #expect(damage == [try #require(renderer.layout.boxes["np"]).integral])
        let diff = difference(try Renderer(scene: s, size: size).snapshot(at: paused), surface, in: size.rect)
        #expect(diff.count == 0, "differs in \(String(describing: diff.bounds))")
    }
}
