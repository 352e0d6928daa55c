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

    /// Byte for byte, with memcmp: a loop over a 720p frame's bytes in a debug build takes seconds.
    func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }

    /// How many bytes differ and where the first ones are (for a failure's message only).
    func differences(_ a: [UInt8], _ b: [UInt8], _ size: PixelSize) -> String {
        if same(a, b) { return "none" }
        let idx = zip(a, b).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
        let places = idx.prefix(3).map { i in i < size.width * size.height ? "Y(\(i % size.width),\(i / size.width))" : "C\(i)" }
        return "\(idx.count) bytes differ at \(places)"
    }

    /// The reference for a frame: a full redraw, converted whole into a fresh buffer.
    func fullRedraw(_ reference: Renderer, at time: FrameTime, size: PixelSize) throws -> (FramePool, MediaBuffer) {
        let pool = try FramePool(size: size, fps: 30, format: .i420, buffers: 1)
        let surface = try reference.snapshot(at: time)
        let buffer = try pool.acquire()
        try pool.withPlanes(buffer) { p in
            surface.withBytes { bytes in
                I420Converter.convert(bgrx: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                      stride: surface.stride, into: p, rect: (0, 0, size.width, size.height))
            }
        }
        return (pool, buffer)
    }

    /// Holding 3 buffers makes the pool rotate (each buffer several frames old); holding none lets the producer
    /// draw into the previous frame's buffer again, as it does live; holding 6, more than the pool has (an encoder
    /// fallen behind), some frames get buffers of their own.
    @Test(arguments: [3, 0, 6])
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
            let (refPool, refBuffer) = try fullRedraw(reference, at: time, size: size)
            let got = try planes(producer.pool, buffer), want = try planes(refPool, refBuffer)
            let diffIdx = zip(got, want).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset)
            let differing = diffIdx.count
            let places = diffIdx.prefix(3).map { i in i < size.width * size.height ? "Y(\(i % size.width),\(i / size.width))" : "C\(i)" }
            #expect(differing == 0, "frame \(f) drawn=\(drawn): \(differing) bytes differ at \(places)")
            held.append(buffer)
            if held.count > holding { held.removeFirst() }
        }
        #expect(drawnFrames < 90, "paused stretches should repeat the previous buffer")
        #expect((producer.pool.oneOffs > 0) == (holding >= producer.pool.capacity),
                "\(producer.pool.oneOffs) buffers made outside a pool of \(producer.pool.capacity), holding \(holding)")
    }

    /// A scrolling ticker over a plain band is written into the I420 frame from its strips' own I420, without being
    /// drawn into the canvas. Every frame must still be byte for byte a full redraw converted whole: at odd and even
    /// edges of the ticker's region (the demo's at 720p starts on row 647; padding 5 puts its sides on odd columns),
    /// with copies landing on odd and even columns, across new items (two loops of different strips side by side),
    /// through a pause, with buffers held (the pool rotating) or reused; and a copy of the picture taken in between
    /// (the control API's snapshot) is the full redraw's picture.
    @Test(arguments: [("demo", 0), ("demo", 3), ("odd", 0), ("odd", 3)])
    func stripsWrittenStraightIntoTheFrameAreTheBytesOfAFullRedraw(scene name: String, holding: Int) throws {
        let size = PixelSize(width: 1280, height: 720)
        let scene = name == "demo" ? DemoScene.load() : try SceneLoader.parse("""
        size: 1280x720
        background: "#203040"
        widgets:
          - {id: memo, type: ticker, items: ["odd edges: padding 5 — 奇数の端 █▀▄█", "🎬 second item ÅÉ gjpq"], speed: 97,
             place: {edge: top, size: 0.1}, style: {background: "#000000aa", padding: 5}}
          - {id: label, type: text, text: "beside the ticker", place: fill}
        """, file: "odd.yaml")
        let live = Renderer(scene: scene, size: size), reference = Renderer(scene: scene, size: size)
        let ticker = try #require(live.widgets.first { $0 is TickerWidget } as? TickerWidget)
        let producer = try FrameProducer(size: size, fps: 30)
        let start = Date(timeIntervalSince1970: 1_772_600_767.9)
        var held: [MediaBuffer] = []
        var directFrames = 0, lefts = Set<Int>()
        for f in 0..<75 {
            // Frames 40-49 stand still (a pause); the items change at frame 20.
            let media = f < 40 ? Double(f) / 30 : f < 50 ? 40.0 / 30 : Double(f - 10) / 30
            if f == 20 {
                for r in [live, reference] {
                    (r.widgets.first { $0 is TickerWidget } as? TickerWidget)?.replaceItems(["new items — 新しい", "ب"], at: media)
                }
            }
            let time = FrameTime(frame: Int64(f), media: media, wall: start + Double(f) / 30)
            let (buffer, drawn) = try producer.produce(live, at: time)
            if drawn, let d = live.direct.first {
                directFrames += 1
                lefts.insert(Int(d.x0) & 1)
                for p in d.pieces { lefts.insert(2 + p.strip.placement(x: p.x, y: p.y).left & 1) }
            }
            let (refPool, refBuffer) = try fullRedraw(reference, at: time, size: size)
            let got = try planes(producer.pool, buffer), want = try planes(refPool, refBuffer)
            let equal = same(got, want)
            #expect(equal, "frame \(f): \(differences(got, want, size))")
            if f % 25 == 12 {
                let copy = try producer.copyOfPicture(live), full = try reference.snapshot(at: time)
                let equal = copy.withBytes { a in full.withBytes { b in a.count == b.count && memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
                #expect(equal, "frame \(f): the copy of the picture is not the full redraw")
            }
            held.append(buffer)
            if held.count > holding { held.removeFirst() }
        }
        #expect(directFrames >= 50, "frames written straight: \(directFrames)")
        // Copies landed on even and odd columns (2, 3), and the region starts on an odd column in the odd scene.
        #expect(lefts.isSuperset(of: [2, 3]) && (name == "demo" || lefts.contains(1)), "\(lefts.sorted())")
        if name == "demo" { #expect(Int(ticker.content.minY) & 1 == 1, "the demo's band should start on an odd row") }
    }

    /// A video plate (a background layer under widgets): its I420 frames reach the buffer byte for byte outside
    /// the widgets' boxes, and inside them the buffer is what a full redraw converts; frame after frame, with the
    /// plate, an inset and a ticker changing at different times, buffers held (the pool rotating) or reused.
    @Test(arguments: [3, 0])
    func aPlateIsCopiedAsItIsAndOnlyTheWidgetsOverItAreConverted(holding: Int) throws {
        Gst.initialize()
        let size = PixelSize(width: 640, height: 360)
        let scene = try SceneLoader.parse("""
        size: 640x360
        widgets:
          - {id: bg, type: video, source: "test:smpte", place: background}
          - {id: title, type: text, text: "OVER THE PLATE", style: {color: "#ffffff", background: "#00000066"}, place: {edge: top, size: 0.2}}
          - {id: memo, type: ticker, items: ["a ticker over the plate, moving every frame", "二番目"], style: {background: "#00000088"}}
          - {id: pip, type: video, source: "test:ball", place: {inset: top-right, width: 0.3}}
        """, file: "plate.yaml")
        let live = Renderer(scene: scene, size: size), reference = Renderer(scene: scene, size: size)
        #expect((live.widget(id: "bg") as? VideoWidget)?.isPlate == true && (live.widget(id: "pip") as? VideoWidget)?.isPlate == false)
        // A plate frame: luma and chroma ramps that move with `k`, in GStreamer's I420 layout.
        func plateFrame(_ k: Int) throws -> MediaBuffer {
            let w = size.width, h = size.height
            return try #require(MediaBuffer.filled(bytes: w * h * 3 / 2) { raw in
                let b = raw.bindMemory(to: UInt8.self)
                for y in 0..<h { for x in 0..<w { b[y * w + x] = UInt8(16 + (x + 2 * y + 7 * k) % 220) } }
                for y in 0..<(h / 2) { for x in 0..<(w / 2) {
                    b[w * h + y * w / 2 + x] = UInt8(64 + (x + 3 * k) % 128)
                    b[w * h * 5 / 4 + y * w / 2 + x] = UInt8(64 + (y + 5 * k) % 128)
                } }
            })
        }
        func insetFrame(_ k: Int, _ s: PixelSize) throws -> MediaBuffer {
            try #require(MediaBuffer.filled(bytes: s.width * s.height * 4) { raw in
                let words = raw.bindMemory(to: UInt32.self)
                for i in words.indices { words[i] = 0xFF00_0000 | UInt32((k * 40) % 256) << 16 | UInt32(i % 256) }
            })
        }
        let producer = try FrameProducer(size: size, fps: 30)
        var held: [MediaBuffer] = []
        var copied = 0
        for f in 0..<45 {
            let newPlate = f % 3 == 0 ? try plateFrame(f) : nil
            // Half way, the plate is made translucent at run time: no longer copied, drawn like any layer.
            if f == 30 { for r in [live, reference] { (r.widget(id: "bg") as! VideoWidget).update(source: nil, opacity: 0.5) } }
            for r in [live, reference] {
                if let newPlate { (r.widget(id: "bg") as! VideoWidget).slot.put(newPlate, size: size, i420: true, at: Double(f)) }
                if f % 4 == 1, let w = r.widget(id: "pip") as? VideoWidget, let s = w.slot.wanted {
                    w.slot.put(try insetFrame(f, s), size: s, at: Double(f))
                }
            }
            let time = FrameTime(frame: Int64(f), media: Double(f) / 30, wall: Date(timeIntervalSince1970: 1_772_600_767 + Double(f) / 30))
            let (buffer, _) = try producer.produce(live, at: time)
            if live.plateRefreshed { copied += 1 }
            let (refPool, refBuffer) = try fullRedraw(reference, at: time, size: size)
            let plate = try #require((live.widget(id: "bg") as? VideoWidget)?.slot.frame)
            let original = try #require(plate.buffer.withBytes { [UInt8]($0) })
            let got = try planes(producer.pool, buffer), want = try planes(refPool, refBuffer)
            let w = size.width, h = size.height
            var mask = [Bool](repeating: false, count: w * h)
            for r in live.plateCovered {
                for y in Int(r.minY)..<Int(r.maxY) { for x in Int(r.minX)..<Int(r.maxX) { mask[y * w + x] = true } }
            }
            func under(_ x: Int, _ y: Int) -> Bool { mask[y * w + x] }
            var wrongPlate = 0, wrongWidgets = 0
            if f >= 30 {
                // Translucent: every byte is what a full redraw converts.
                #expect(live.platePicture == nil)
                wrongWidgets = zip(got, want).filter { $0 != $1 }.count
            } else {
                for y in 0..<h { for x in 0..<w {
                    let i = y * w + x
                    if under(x, y) { if got[i] != want[i] { wrongWidgets += 1 } } else if got[i] != original[i] { wrongPlate += 1 }
                } }
                for plane in 0..<2 { for y in 0..<(h / 2) { for x in 0..<(w / 2) {
                    let i = w * h + plane * (w * h / 4) + y * (w / 2) + x
                    if under(2 * x, 2 * y) { if got[i] != want[i] { wrongWidgets += 1 } } else if got[i] != original[i] { wrongPlate += 1 }
                } } }
            }
            #expect(wrongPlate == 0 && wrongWidgets == 0, "frame \(f): \(wrongPlate) plate bytes and \(wrongWidgets) bytes under widgets differ")
            held.append(buffer)
            if held.count > holding { held.removeFirst() }
        }
        // The plate's own frames were copied, not converted: every third frame brought a new one.
        #expect(copied >= 9, "plate refreshes: \(copied)")
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
