import Compositor
import Foundation

// Render cost of a scene per frame: full redraw, the usual changed-region redraw, and what the live frame loop
// does per frame ("produce": changed regions drawn and converted to I420 in pooled buffers, which are released
// as an encoder would release them).
// Usage: RenderBench [--frames N] [--size WxH ...] [--mode produce|full|changed|convert] [--paced [--burst K]] [SCENE]
// Prints one line per size and mode: mean, p50, p99 milliseconds per frame, and a JSON line for scripts.

var frames = 300
var sizes: [PixelSize] = []
var scenePath: String?
var modes = ["produce", "full", "changed"]
/// Produce one frame per frame interval, as the live loop does (caches go cold in between), not back to back.
var paced = false
/// With `--paced`: K frames drawn back to back after each wait of K frame intervals (each into its own buffer, held
/// until the burst is done), as a loop that drew ahead would: what drawing while the caches are warm would save.
var burst = 1
var args = Array(CommandLine.arguments.dropFirst())
while !args.isEmpty {
    let a = args.removeFirst()
    switch a {
    case "--frames": frames = Int(args.removeFirst()) ?? frames
    case "--size": sizes.append(try RenderSize.parse(args.removeFirst()))
    case "--mode": modes = [args.removeFirst()]
    case "--paced": paced = true
    case "--burst": burst = max(1, Int(args.removeFirst()) ?? 1)
    default: scenePath = a
    }
}
if sizes.isEmpty { sizes = [PixelSize(width: 1280, height: 720), PixelSize(width: 1920, height: 1080)] }
let scene = try scenePath.map { try SceneLoader.load(path: $0) } ?? DemoScene.load()

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

/// Drawing and conversion of `frames` frames as the live loop does them, into I420 buffers that are released
/// before the next frame (x264 with tune=zerolatency is done with a frame before the next one comes).
@MainActor func produce(size: PixelSize) throws -> (times: [Double], drawn: Int, converted: Double) {
    let renderer = Renderer(scene: scene, size: size)
    let producer = try FrameProducer(size: size, fps: scene.fps)
    let start = Date(timeIntervalSince1970: 1_772_600_767)
    var times: [Double] = []
    var held: [MediaBuffer] = []
    var drawn = 0
    for f in 0..<(frames + 30) {
        let t = Double(f) / Double(scene.fps)
        if paced && f % burst == 0 {
            held.removeAll()
            usleep(UInt32(1_000_000 * burst / scene.fps))
        }
        let t0 = DispatchTime.now().uptimeNanoseconds
        let (buffer, wasDrawn) = try producer.produce(renderer, at: FrameTime(frame: Int64(f), media: t, wall: start + t))
        let t1 = DispatchTime.now().uptimeNanoseconds
        held.append(buffer)
        if held.count >= burst { held.removeFirst() }
        if f >= 30 {
            times.append(Double(t1 - t0) / 1e6)
            if wasDrawn { drawn += 1 }
        }
    }
    let share = Double(producer.convertedPixels) / Double(frames + 30) / Double(size.width * size.height) * 100
    return (times, drawn, share)
}

/// Nanoseconds per pixel of BGRx → I420 over whole frames, the C kernel and one block at a time.
func convertCost(size: PixelSize, simd: Bool) -> Double {
    let w = size.width, h = size.height
    var bgrx = [UInt8](repeating: 0, count: w * h * 4)
    for i in bgrx.indices { bgrx[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 7) }
    var y = [UInt8](repeating: 0, count: w * h), u = [UInt8](repeating: 0, count: w * h / 4), v = u
    var best = Double.infinity
    for _ in 0..<20 {
        let t0 = DispatchTime.now().uptimeNanoseconds
        y.withUnsafeMutableBufferPointer { py in u.withUnsafeMutableBufferPointer { pu in v.withUnsafeMutableBufferPointer { pv in
            bgrx.withUnsafeBufferPointer { src in
                let planes = I420Converter.Planes(y: py.baseAddress!, yStride: w, u: pu.baseAddress!, uStride: w / 2,
                                                  v: pv.baseAddress!, vStride: w / 2)
                if simd {
                    I420Converter.convert(bgrx: src.baseAddress!, stride: w * 4, into: planes, rect: (0, 0, w, h))
                } else {
                    I420Converter.convertScalar(bgrx: src.baseAddress!, stride: w * 4, into: planes, rect: (0, 0, w, h))
                }
            }
        } } }
        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - t0))
    }
    return best / Double(w * h)
}

for size in sizes {
  if modes.contains("convert") {
    print(String(format: "%@ convert %.3f ns/pixel (kernel), %.3f ns/pixel (scalar), best of 20 whole frames",
                 size.description, convertCost(size: size, simd: true), convertCost(size: size, simd: false)))
  }
  if modes.contains("produce") {
    let (times, drawn, converted) = try produce(size: size)
    let sorted = times.sorted()
    let mean = times.reduce(0, +) / Double(times.count)
    print(String(format: "%@ produce mean %.3f ms  p50 %.3f ms  p99 %.3f ms  drawn %d of %d frames, converted %.0f%% of the picture",
                 size.description, mean, percentile(sorted, 0.5), percentile(sorted, 0.99), drawn, times.count, converted))
    print(String(format: "JSON {\"size\":\"%@\",\"mode\":\"produce\",\"mean_ms\":%.4f,\"p50_ms\":%.4f,\"p99_ms\":%.4f}",
                 size.description, mean, percentile(sorted, 0.5), percentile(sorted, 0.99)))
  }
    for mode in ["full", "changed"] where modes.contains(mode) {
        let renderer = Renderer(scene: scene, size: size)
        let surface = try ImageSurface(width: size.width, height: size.height)
        let canvas = Canvas(surface: surface)
        let start = Date(timeIntervalSince1970: 1_772_600_767)
        var times: [Double] = []
        var damagedPixels = 0.0
        for f in 0..<(frames + 30) {
            let t = Double(f) / Double(scene.fps)
            if mode == "full" { renderer.invalidate() }
            let t0 = DispatchTime.now().uptimeNanoseconds
            let damage = renderer.render(on: canvas, at: FrameTime(frame: Int64(f), media: t, wall: start + t))
            let t1 = DispatchTime.now().uptimeNanoseconds
            // The first 30 frames warm caches (fonts, glyphs) and are not counted.
            if f >= 30 {
                times.append(Double(t1 - t0) / 1e6)
                damagedPixels += damage.reduce(0) { $0 + $1.width * $1.height }
            }
        }
        let sorted = times.sorted()
        let mean = times.reduce(0, +) / Double(times.count)
        let share = damagedPixels / Double(frames) / Double(size.width * size.height) * 100
        print(String(format: "%@ %@ mean %.3f ms  p50 %.3f ms  p99 %.3f ms  redrawn %.0f%% of the picture",
                     size.description, mode, mean, percentile(sorted, 0.5), percentile(sorted, 0.99), share))
        print(String(format: "JSON {\"size\":\"%@\",\"mode\":\"%@\",\"mean_ms\":%.4f,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"redrawn_pct\":%.1f}",
                     size.description, mode, mean, percentile(sorted, 0.5), percentile(sorted, 0.99), share))
    }
}
