import Foundation
import Testing
import TestSupport
@testable import Compositor

/// A web widget's page is told its coming size when a resize is asked for (`PageFrames.expect`), before the frame loop
/// re-lays the widget: its frames of that size are kept but shown only from the widget's new layout on.
@Suite struct PageFramesTests {
    /// Who was told what size, in order.
    final class Told: @unchecked Sendable {
        private let lock = NSLock()
        private var sizes: [PixelSize] = []
        func add(_ s: PixelSize) { lock.withLock { sizes.append(s) } }
        var all: [PixelSize] { lock.withLock { sizes } }
    }

    func frames() -> (PageFrames, Told) {
        let f = PageFrames(), told = Told()
        f.onWanted = { told.add($0) }
        return (f, told)
    }

    /// A frame of `size` filled with `byte`.
    func put(_ f: PageFrames, _ size: PixelSize, _ byte: UInt8) {
        #expect(f.put(size: size) { dst, stride in
            memset(dst, Int32(byte), stride * size.height)
            return true
        })
    }

    let big = PixelSize(width: 64, height: 36), small = PixelSize(width: 32, height: 18)

    @Test func aFrameOfTheComingSizeWaitsForTheWidgetsNewLayout() throws {
        let (f, told) = frames()
        f.want(big)
        put(f, big, 1)
        #expect(try #require(f.take()).surface.width == big.width)
        let shown = f.newest

        f.expect(small)
        #expect(told.all == [big, small])
        #expect(f.pageSize == small && f.wantedSize == big)
        #expect(f.accepts(big) && f.accepts(small) && !f.accepts(PixelSize(width: 10, height: 10)))

        // The page re-laid before the widget: its frame is kept, not shown in the old box.
        put(f, small, 2)
        #expect(f.newest == shown)
        #expect(try #require(f.take()).surface.width == big.width)

        // The frame loop applies the resize: the widget takes the kept frame, and the page is not told again.
        f.want(small)
        #expect(told.all == [big, small])
        #expect(f.newest != shown)
        let now = try #require(f.take()).surface
        #expect(now.width == small.width && now.height == small.height)
        #expect(!f.accepts(big))
    }

    @Test func aPageIsToldOnlyWhatItWasNotToldYet() {
        let (f, told) = frames()
        f.expect(small)
        #expect(told.all.isEmpty) // No widget laid out yet: nothing to be ahead of.
        f.want(big)
        f.want(big)
        f.expect(big)
        #expect(told.all == [big])
        // A resize asked for and then another before the frame: the page follows the newest.
        f.expect(small)
        f.expect(big)
        f.want(big)
        #expect(told.all == [big, small, big])
    }

    /// A renewal: the launch started beside the page filled frames of its own (a `FrameRoute` to them); promoted, the
    /// widget's frames take over its newest, and its frames go to the widget's from then on.
    @Test func aPromotedLaunchsNewestFrameIsTheWidgetsNext() throws {
        let (f, _) = frames()
        f.want(big)
        put(f, big, 1)
        _ = f.take()
        let staging = PageFrames()
        staging.want(big)
        let route = FrameRoute(staging)
        route.with { put($0, big, 7) }
        #expect(try #require(f.take()).surface.pixel(x: 0, y: 0).b == 1, "not shown before it is promoted")
        let before = f.newest
        // While a frame is being read into the route, a promotion waits for nothing: it is refused, to be tried again.
        route.with { _ in #expect(!route.promote(to: f, wait: 0.05)) }
        #expect(f.newest == before)
        #expect(route.promote(to: f))
        #expect(f.newest != before)
        #expect(try #require(f.take()).surface.pixel(x: 0, y: 0).b == 7)
        route.with { put($0, big, 9) }
        #expect(try #require(f.take()).surface.pixel(x: 0, y: 0).b == 9)
    }

    @Test func theComingPageSizeIsTheOneTheLayoutGives() throws {
        let s = try scene("""
            size: 1280x720
            widgets:
              - {id: bar, type: text, text: hi, place: {edge: top, size: 0.2}}
              - {id: page, type: web, html: '<p>x</p>', place: fill, style: {padding: 13}}
              - {id: corner, type: web, html: '<p>y</p>', place: {inset: right, width: 0.3, aspect: "16:9", portrait: {inset: center, width: 0.9}}}
            """)
        let renderer = Renderer(scene: s)
        for size in [PixelSize(width: 1280, height: 720), PixelSize(width: 333, height: 599),
                     PixelSize(width: 160, height: 90), PixelSize(width: 1919, height: 1081)] {
            renderer.resize(to: size)
            let coming = WebWidget.pageSizes(of: s, at: size)
            for id in ["page", "corner"] {
                let laid = (renderer.widget(id: id) as? WebWidget)?.pageSize
                #expect(coming[id] == (renderer.layout.boxes[id] == nil ? nil : laid), "\(id) at \(size)")
            }
        }
    }
}
