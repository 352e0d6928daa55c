import CGst
import Compositor
import Foundation

// Render cost of a scene per frame: full redraw, the usual changed-region redraw, and what the live frame loop
// does per frame ("produce": changed regions drawn and converted to I420 in pooled buffers, which are released
// as an encoder would release them).
// Usage: RenderBench [--frames N] [--size WxH ...] [SCENE]
// Prints one line per size and mode: mean, p50, p99 milliseconds per frame, and a JSON line for scripts.

var frames = 300
var sizes: [PixelSize] = []
var scenePath: String?
var args = Array(CommandLine.arguments.dropFirst())
while !args.isEmpty {
    let a = args.removeFirst()
    switch a {
    case "--frames": frames = Int(args.removeFirst()) ?? frames
    case "--size": sizes.append(try RenderSize.parse(args.removeFirst()))
    default: scenePath = a
    }
}
if sizes.isEmpty { sizes = [PixelSize(width: 1280, height: 720), PixelSize(width: 1920, height: 1080)] }
let scene = try scenePath.map { try SceneLoader.load(path: $0) } ?? DemoScene.load()

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

/// Drawing and conversion of `frames` frames as the live loop does them, in pooled I420 buffers kept by a short
/// queue (an encoder holds a few frames).
@MainActor func produce(size: PixelSize) throws -> (times: [Double], drawn: Int) {
    let renderer = Renderer(scene: scene, size: size)
    let producer = try FrameProducer(size: size, fps: scene.fps)
    let start = Date(timeIntervalSince1970: 1_772_600_767)
    var times: [Double] = []
    var held: [UnsafeMutablePointer<GstBuffer>] = []
    var drawn = 0
    for f in 0..<(frames + 30) {
        let t = Double(f) / Double(scene.fps)
        let t0 = DispatchTime.now().uptimeNanoseconds
        let (buffer, wasDrawn) = try producer.produce(renderer, at: FrameTime(frame: Int64(f), media: t, wall: start + t))
        let t1 = DispatchTime.now().uptimeNanoseconds
        held.append(buffer)
        if held.count > 2 { gst_buffer_unref(held.removeFirst()) }
        if f >= 30 {
            times.append(Double(t1 - t0) / 1e6)
            if wasDrawn { drawn += 1 }
        }
    }
    return (times, drawn)
}

for size in sizes {
    let (times, drawn) = try produce(size: size)
    let sorted = times.sorted()
    let mean = times.reduce(0, +) / Double(times.count)
    print(String(format: "%@ produce mean %.3f ms  p50 %.3f ms  p99 %.3f ms  drawn %d of %d frames",
                 size.description, mean, percentile(sorted, 0.5), percentile(sorted, 0.99), drawn, times.count))
    print(String(format: "JSON {\"size\":\"%@\",\"mode\":\"produce\",\"mean_ms\":%.4f,\"p50_ms\":%.4f,\"p99_ms\":%.4f}",
                 size.description, mean, percentile(sorted, 0.5), percentile(sorted, 0.99)))
    for mode in ["full", "changed"] {
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
