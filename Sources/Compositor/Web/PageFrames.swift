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
    /// The size the widget wants its page at, and who to tell when it changes.
    private var wanted: PixelSize?
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
            surface = try? ImageSurface(width: size.width, height: size.height, format: .argb32)
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

    /// On the render thread: the newest frame (the one taken before when nothing newer came), and whether it has
    /// no transparent pixel.
    func take() -> (surface: ImageSurface, opaque: Bool)? {
        lock.withLock {
            if let r = ready, sequence != taken {
                if let d = drawn, spare == nil { spare = d }
                drawn = r
                drawnOpaque = readyOpaque
                ready = nil
                taken = sequence
            }
            return drawn.map { ($0, drawnOpaque) }
        }
    }

    var newest: UInt64 { lock.withLock { sequence } }

    /// Whether the frame `take()` will give next has no transparent pixel (without taking it).
    var nextIsOpaque: Bool { lock.withLock { ready != nil ? readyOpaque : (drawn != nil && drawnOpaque) } }

    /// On the render thread: the page should be `size` now.
    func want(_ size: PixelSize) {
        let changed = lock.withLock { () -> Bool in
            defer { wanted = size }
            return wanted != size
        }
        if changed { onWanted?(size) }
    }

    var wantedSize: PixelSize? { lock.withLock { wanted } }
}
