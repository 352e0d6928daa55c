import Foundation
import Testing
import TestSupport
@testable import Compositor

let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("examples").path

/// The strip must survive a real H.264 encode at ordinary bitrates and scaling down to 320 pixels wide.
@Suite struct TimecodeThroughH264Tests {
    @Test(arguments: ["1500k", "400k"])
    func everyFrameReadsBackAfterX264AndScalingTo320(bitrate: String) throws {
        let dir = try TempDir()
        let size = PixelSize(width: 1280, height: 720)
        let frames = 45
        let scene = try SceneLoader.load(path: examples + "/timecode.yaml")
        let renderer = Renderer(scene: scene, size: size)
        let surface = try ImageSurface(width: size.width, height: size.height)
        let canvas = Canvas(surface: surface)
        let start = Date(timeIntervalSince1970: 1_772_600_767.5)
        var raw = Data()
        for f in 0..<frames {
            renderer.render(on: canvas, at: FrameTime(frame: Int64(f), media: Double(f) / 30,
                                                      wall: start + Double(f) / 30))
            surface.withBytes { raw.append(contentsOf: $0) }
        }
        try raw.write(to: URL(fileURLWithPath: dir.file("frames.bgrx")))
        let encode = try runTool(["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "bgr0", "-s", "1280x720",
                                  "-r", "30", "-i", dir.file("frames.bgrx"), "-c:v", "libx264", "-preset", "veryfast",
                                  "-b:v", bitrate, "-pix_fmt", "yuv420p", dir.file("out.mp4")])
        #expect(encode.status == 0, "\(encode.stderr)")
        let decode = try runTool(["ffmpeg", "-v", "error", "-i", dir.file("out.mp4"), "-vf", "scale=320:180",
                                  "-f", "rawvideo", "-pix_fmt", "gray", dir.file("small.gray")])
        #expect(decode.status == 0, "\(decode.stderr)")
        let gray = try Data(contentsOf: URL(fileURLWithPath: dir.file("small.gray")))
        #expect(gray.count == 320 * 180 * frames)
        var read = 0
        for f in 0..<frames {
            let plane = gray.subdata(in: (f * 320 * 180)..<((f + 1) * 320 * 180))
            let r = plane.withUnsafeBytes { TimecodeCodec.read(luma: $0, width: 320, height: 180, stride: 320) }
            let expectedMs = UInt64(((start + Double(f) / 30).timeIntervalSince1970 * 1000).rounded(.down))
            if r == .init(frame: UInt64(f), wallMilliseconds: expectedMs) { read += 1 }
        }
        #expect(read == frames)
    }
}
