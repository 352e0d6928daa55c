import Foundation
import Testing
import TestSupport
@testable import Compositor

@Suite struct FrameProducerTests {
    /// The I420 planes of `buffer` as one array (Y, then U, then V), for comparing frames.
    func planes(_ pool: FramePool, _ buffer: MediaBuffer) throws -> [UInt8] {
        let size = pool.size
        return try pool.withPlanes(buffer, readOnly: true) { p in
            var out: [UInt8] = []
            for y in 0..<size.height { out += UnsafeBufferPointer(start: p.y + y * p.yStride, count: size.width) }
            for y in 0..<(size.height / 2) { out += UnsafeBufferPointer(start: p.u + y * p.uStride, count: size.width / 2) }
            for y in 0..<(size.height / 2) { out += UnsafeBufferPointer(start: p.v + y * p.vStride, count: size.width / 2) }
            return out
        }
    }

    /// Holding 3 buffers makes the pool rotate (each buffer several frames old); holding none lets the producer
    /// draw into the previous frame's buffer again, as it does live.
    @Test(arguments: [3, 0])
    func everyFrameEqualsAFullConversionOfAFullRedraw(holding: Int) throws {
        let size = PixelSize(width: 640, height: 360)
        let scene = DemoScene.load()
        let live = Renderer(scene: scene, size: size)
        let reference = Renderer(scene: scene, size: size)
        let producer = try FrameProducer(size: size, fps: 30)
        let start = Date(timeIntervalSince1970: 1_772_600_767.9)
        var held: [MediaBuffer] = []
        var drawnFrames = 0
        // 90 frames with pauses (same scene time) in between.
        for f in 0..<90 {
            let media = f % 20 < 15 ? Double(f) / 30 : 0.5
            let time = FrameTime(frame: Int64(f), media: media, wall: start + Double(f) / 30)
            let (buffer, drawn) = try producer.produce(live, at: time)
            if drawn { drawnFrames += 1 }
            // Reference: full redraw, full conversion into a fresh buffer.
            let refPool = try FramePool(size: size, fps: 30, format: .i420, buffers: 1)
            let surface = try reference.snapshot(at: time)
            let refBuffer = try refPool.acquire()
            try refPool.withPlanes(refBuffer) { p in
                surface.withBytes { bytes in
                    I420Converter.convert(bgrx: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                          stride: surface.stride, into: p, rect: (0, 0, size.width, size.height))
                }
            }
            let got = try planes(producer.pool, buffer), want = try planes(refPool, refBuffer)
            let diffIdx = zip(got, want).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
            let differing = diffIdx.count
            let places = diffIdx.prefix(3).map { i in i < size.width * size.height ? "Y(\(i % size.width),\(i / size.width))" : "C\(i)" }
            #expect(differing == 0, "frame \(f) drawn=\(drawn): \(differing) bytes differ at \(places)")
            held.append(buffer)
            if held.count > holding { held.removeFirst() }
        }
        #expect(drawnFrames < 90, "paused stretches should repeat the previous buffer")
    }

    @Test func ourConversionMatchesVideoconvert() throws {
        let size = PixelSize(width: 320, height: 180)
        let renderer = Renderer(scene: DemoScene.load(), size: size)
        let surface = try renderer.snapshot(at: FrameTime(frame: 0, media: 3, wall: Date(timeIntervalSince1970: 0)))
        let dir = NSTemporaryDirectory() + "conv-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let raw = dir + "/frame.bgrx", out = dir + "/frame.i420"
        let data = surface.withBytes { Data($0) }
        try data.write(to: URL(fileURLWithPath: raw))
        let launch = "filesrc location=\(raw) blocksize=\(data.count) ! video/x-raw,format=BGRx,width=320,height=180," +
            "framerate=1/1,colorimetry=sRGB ! videoconvert ! video/x-raw,format=I420,colorimetry=bt709 ! filesink location=\(out)"
        let r = try runTool(["gst-launch-1.0", "-q"] + launch.split(separator: " ").map(String.init))
        #expect(r.status == 0, "\(r.stderr)")
        let theirs = [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
        let pool = try FramePool(size: size, fps: 1, format: .i420, buffers: 1)
        let buffer = try pool.acquire()
        try pool.withPlanes(buffer) { p in
            surface.withBytes { bytes in
                I420Converter.convert(bgrx: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), stride: surface.stride,
                                      into: p, rect: (0, 0, 320, 180))
            }
        }
        let ours = try planes(pool, buffer)
        #expect(theirs.count == ours.count)
        let worst = zip(ours, theirs).map { abs(Int($0) - Int($1)) }.max() ?? 99
        #expect(worst <= 3, "largest difference from videoconvert: \(worst)")
    }
}
