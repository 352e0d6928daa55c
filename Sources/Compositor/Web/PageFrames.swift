import Foundation

/// The newest frame of a web widget's page, handed from the thread that reads the page's process to the render
/// thread without a copy there: the reader fills a spare surface and swaps it in; the widget takes the newest when
/// it draws (three surfaces in turn: one being filled, one ready, one being drawn). The frame loop never waits for
/// the page: it draws what is ready.
///
/// `@unchecked Sendable`: everything is behind `lock`; a surface is touched by one thread at a time (the reader
/// its spare, the render thread the one it took).
final class PageFrames: @unchecked Sendable {
    private let lock = NSLock()
    private var spare: ImageSurface?
    private var ready: ImageSurface?
    private var drawn: ImageSurface?
    /// Whether the ready and the drawn surfaces have no transparent pixel.
    private var readyOpaque = false
    private var drawnOpaque = false
    /// Bumped by every frame made ready; the widget's appearance.
    private(set) var sequence: UInt64 = 0
    private var taken: UInt64 = 0
    /// Holds asked for (a call that lands on a stated frame): while any is on, `take()` gives the picture it gave
    /// before and the newer ones wait.
    private var holds = 0
    /// The size the widget lays its page out at now; the size the page was told last (ahead of the widget's during a
    /// resize: the page is told at the request, the widget re-lays at the next frame); who tells the page.
    private var wanted: PixelSize?
    private var told: PixelSize?
    /// Called under the lock: it must only post the size on (never wait, never call back in).
    var onWanted: (@Sendable (PixelSize) -> Void)?

    /// On the reader's thread: fills a surface of `size` with `fill` (premultiplied BGRA rows, the stride given)
    /// and makes it the newest, unless `fill` says it could not (false).
    @discardableResult
    func put(size: PixelSize, opaque: Bool = false, _ fill: (UnsafeMutablePointer<UInt8>, Int) -> Bool) -> Bool {
        var surface = lock.withLock { () -> ImageSurface? in
            defer { spare = nil }
            return spare
        }
        if surface == nil || surface!.width != size.width || surface!.height != size.height {
            surface = try? ImageSurface.mapped(width: size.width, height: size.height, format: .argb32)
        }
        guard let surface else { return false }
        guard surface.withMutableBytes(dirty: (0, 0, size.width, size.height), { fill($0, surface.stride) }) else {
            lock.withLock { if spare == nil { spare = surface } }
            return false
        }
        lock.withLock {
            // The frame not drawn becomes the spare; when the render thread took it meanwhile, it left the surface
            // it drew as the spare, which is kept (not dropped for a new allocation).
            if let unseen = ready { spare = unseen }
            ready = surface
            readyOpaque = opaque
            sequence += 1
        }
        return true
    }

    /// The newest frame of `other` (a page started beside this one to take its place) becomes this one's newest;
    /// `other` is not used again.
    func takeOver(from other: PageFrames) {
        let newest = other.lock.withLock { () -> (ImageSurface, Bool)? in
            if let r = other.ready { return (r, other.readyOpaque) }
            return other.drawn.map { ($0, other.drawnOpaque) }
        }
        guard let (surface, opaque) = newest else { return }
        lock.withLock {
            if let unseen = ready { spare = unseen }
            ready = surface
            readyOpaque = opaque
            sequence += 1
        }
    }

    /// On the render thread: the newest frame (the one taken before when nothing newer came), and whether it has
    /// no transparent pixel.
    func take() -> (surface: ImageSurface, opaque: Bool)? {
        lock.withLock {
            if holds == 0, let r = ready, sequence != taken, fits(r) {
                if let d = drawn, spare == nil { spare = d }
                drawn = r
                drawnOpaque = readyOpaque
                ready = nil
                taken = sequence
            }
            return drawn.map { ($0, drawnOpaque) }
        }
    }

    /// The newest frame `take()` would give (one of the coming size waits for the widget's new layout).
    var newest: UInt64 { lock.withLock { holds == 0 && ready.map(fits) == true ? sequence : taken } }

    /// Whether the frame `take()` will give next has no transparent pixel (without taking it).
    var nextIsOpaque: Bool {
        lock.withLock { holds == 0 && ready.map(fits) == true ? readyOpaque : (drawn != nil && drawnOpaque) }
    }

    /// Keeps showing the picture shown now until `release()`: what the page draws meanwhile waits.
    func hold() { lock.withLock { holds += 1 } }
    func release() { lock.withLock { holds = max(0, holds - 1) } }
    /// Pictures the page made so far (the newest one's number).
    var made: UInt64 { lock.withLock { sequence } }

    /// Under `lock`: whether a frame suits the widget's layout now.
    private func fits(_ s: ImageSurface) -> Bool { wanted.map { $0.width == s.width && $0.height == s.height } ?? true }

    /// On the render thread: the widget lays its page out at `size` now; the page is told unless it was already.
    func want(_ size: PixelSize) {
        lock.withLock {
            wanted = size
            tell(size)
        }
    }

    /// Before the widget re-lays for a resize asked for: the page is told the size it will have, so that it re-lays
    /// meanwhile; its frames of that size are kept and shown from the widget's new layout on.
    func expect(_ size: PixelSize) {
        lock.withLock { if wanted != nil { tell(size) } }
    }

    /// Under `lock`, so that the page hears sizes in the order they were decided (`onWanted` only posts).
    private func tell(_ size: PixelSize) {
        guard told != size else { return }
        told = size
        onWanted?(size)
    }

    /// Whether a frame of `size` from the page is of use: the widget's size, or the coming one.
    func accepts(_ size: PixelSize) -> Bool { lock.withLock { wanted == nil || size == wanted || size == told } }

    var wantedSize: PixelSize? { lock.withLock { wanted } }
    /// The size the page has, or is about to take.
    var pageSize: PixelSize? { lock.withLock { told } }
}
