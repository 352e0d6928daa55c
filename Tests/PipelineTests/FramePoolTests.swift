import Foundation
import Testing
@testable import Compositor

/// A frame pool holds a fixed number of buffers: with all of them in use, a frame gets a buffer of its own (never a
/// wait, never a pool that grows), and that buffer does not join the pool when it is done with.
@Suite struct FramePoolTests {
    func pooled(_ b: MediaBuffer, in pool: FramePool) -> Bool { b.pointer.pointee.pool == pool.pool }

    @Test func withEveryBufferInUseAFrameGetsOneOfItsOwnAndThePoolStaysItsSize() throws {
        let pool = try FramePool(size: PixelSize(width: 64, height: 36), fps: 30, format: .i420, buffers: 3)
        var held = try (0..<3).map { _ in try pool.acquire() }
        #expect(held.allSatisfy { pooled($0, in: pool) } && pool.oneOffs == 0)
        let extra = try pool.acquire()
        #expect(!pooled(extra, in: pool) && pool.oneOffs == 1, "the fourth buffer is one of its own")
        // It has the pool's layout: its planes map and take a picture.
        try pool.withPlanes(extra) { p in p.y[0] = 200; p.v[0] = 100 }
        #expect(try pool.withPlanes(extra, readOnly: true) { p in (p.y[0], p.v[0]) } == (200, 100))
        // All given back, the pool hands out its own three again, and the one of its own was not kept.
        held.removeAll()
        _ = consume extra
        held = try (0..<3).map { _ in try pool.acquire() }
        #expect(held.allSatisfy { pooled($0, in: pool) } && pool.oneOffs == 1)
        let again = try pool.acquire()
        #expect(!pooled(again, in: pool) && pool.oneOffs == 2, "a pool of three, after four were in use at once")
    }
}
