import Foundation
import Testing
import TestSupport
@testable import Compositor

/// The probe's SSIM and PSNR must say what ffmpeg's `ssim` and `psnr` filters say on the same planes, and the
/// reference picture must be the live path's own luma.
@Suite struct SimilarityTests {
    /// A scene's luma at one moment, and the same with damage: a band of noise, a shifted half, or x264.
    func planes(_ dir: TempDir) throws -> (width: Int, height: Int, clean: [UInt8], damaged: [[UInt8]]) {
        let scene = try SceneLoader.load(path: examples + "/timecode.yaml")
        let reference = ReferencePicture(scene: scene)
        let (w, h) = (320, 180)
        let clean = try reference.luma(for: .init(frame: 42, wallMilliseconds: 1_772_600_767_500), width: w, height: h)
        var rng = SystemRandomNumberGenerator()
        var noisy = clean
        for i in (w * h / 2)..<(w * h * 3 / 4) { noisy[i] = UInt8.random(in: 0...255, using: &rng) }
        // The lower half shows the upper half again: what a picture split in two looks like.
        var split = clean
        for i in (w * h / 2)..<(w * h) { split[i] = clean[i - w * h / 2] }
        var soft = clean
        for i in 0..<(w * h) { soft[i] = UInt8(clamping: Int(clean[i]) + Int.random(in: -2...2, using: &rng)) }
        return (w, h, clean, [noisy, split, soft])
    }

    /// ffmpeg's figures for two gray planes: (SSIM Y, PSNR average).
    func ffmpeg(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int, in dir: TempDir) throws -> (Double, Double) {
        try Data(a).write(to: URL(fileURLWithPath: dir.file("a.gray")))
        try Data(b).write(to: URL(fileURLWithPath: dir.file("b.gray")))
        let input = ["-f", "rawvideo", "-pix_fmt", "gray", "-s", "\(width)x\(height)", "-i"]
        let r = try runTool(["ffmpeg", "-hide_banner"] + input + [dir.file("a.gray")] + input + [dir.file("b.gray")]
                            + ["-lavfi", "[0][1]ssim;[0][1]psnr", "-f", "null", "-"])
        #expect(r.status == 0, "\(r.stderr)")
        func value(_ pattern: String) -> Double? {
            guard let range = r.stderr.range(of: pattern, options: .regularExpression) else { return nil }
            let text = r.stderr[range]
            return Double(text[text.index(after: text.firstIndex(of: ":")!)...].trimmingCharacters(in: .whitespaces))
        }
        let ssim = try #require(value(#"SSIM Y:[0-9.]+"#), "\(r.stderr)")
        let psnr = value(#"PSNR y:[0-9.inf]+"#) ?? 100
        return (ssim, psnr)
    }

    @Test func ssimAndPSNRAgreeWithFFmpeg() throws {
        let dir = try TempDir()
        let (w, h, clean, damaged) = try planes(dir)
        let same = Similarity.compare(clean, clean, width: w, height: h)
        #expect(same.ssim == 1 && same.psnr == 100)
        var seen: [Double] = []
        for d in damaged {
            let ours = Similarity.compare(d, clean, width: w, height: h)
            let theirs = try ffmpeg(d, clean, width: w, height: h, in: dir)
            #expect(abs(ours.ssim - theirs.0) < 0.001, "SSIM ours \(ours.ssim) ffmpeg \(theirs.0)")
            #expect(abs(ours.psnr - theirs.1) < 0.05, "PSNR ours \(ours.psnr) ffmpeg \(theirs.1)")
            seen.append(ours.ssim)
        }
        // The noise band and the split picture are corrupt by the probe's default; mild noise is not.
        #expect(seen[0] < 0.9 && seen[1] < 0.9 && seen[2] > 0.9, "\(seen)")
    }

    @Test func theWorstRegionIsWhereTheDamageIs() throws {
        let dir = try TempDir()
        let (w, h, clean, damaged) = try planes(dir)
        let noisy = Similarity.compare(damaged[0], clean, width: w, height: h)
        // Noise fills rows h/2 ..< 3h/4: the third row of the 4x4 grid.
        #expect(noisy.worstRegion[1] == h / 2, "\(noisy.worstRegion)")
        #expect(noisy.worstRegionSSIM < noisy.ssim)
    }

    /// The reference is the live path's luma: the frame producer's I420 Y plane for the same moment is the same.
    @Test func theReferenceIsTheLivePathsLuma() throws {
        let scene = try SceneLoader.load(path: examples + "/timecode.yaml")
        let size = PixelSize(width: 320, height: 180)
        let reading = TimecodeCodec.Reading(frame: 7, wallMilliseconds: 1_772_600_767_500)
        let time = FrameTime(frame: 7, media: 7.0 / Double(scene.fps), wall: Date(timeIntervalSince1970: 1_772_600_767.5))
        let producer = try FrameProducer(size: size, fps: scene.fps)
        let (buffer, _) = try producer.produce(Renderer(scene: scene, size: size), at: time)
        let live = try producer.pool.withPlanes(buffer, readOnly: true) { p in
            (0..<size.height).flatMap { y in UnsafeBufferPointer(start: p.y + y * p.yStride, count: size.width) }
        }
        let reference = try ReferencePicture(scene: scene).luma(for: reading, width: size.width, height: size.height)
        #expect(live == reference)
    }

    /// The probe keeps its reference plane from frame to frame: one written before at another size and moment is
    /// the same, once filled, as a plane made afresh.
    @Test func aKeptReferencePlaneIsAFreshOne() throws {
        let scene = try SceneLoader.load(path: examples + "/info-panel.yaml")
        let kept = ReferencePicture(scene: scene)
        var plane: [UInt8] = []
        try kept.luma(for: .init(frame: 3, wallMilliseconds: 1_772_600_700_000), width: 480, height: 270, into: &plane)
        let reading = TimecodeCodec.Reading(frame: 95, wallMilliseconds: 1_772_600_767_500)
        for (w, h) in [(320, 180), (320, 180), (480, 270)] {
            try kept.luma(for: reading, width: w, height: h, into: &plane)
            let fresh = try ReferencePicture(scene: scene).luma(for: reading, width: w, height: h)
            let differing = zip(plane, fresh).filter { $0 != $1 }.count
            #expect(plane.count == fresh.count && differing == 0, "\(w)x\(h): \(differing) bytes differ")
        }
    }
}
