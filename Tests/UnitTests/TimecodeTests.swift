import Foundation
import Testing
@testable import Compositor

@Suite struct TimecodeTests {
    @Test func rowsHaveGuardsRowIdsAndParity() {
        let rows = TimecodeCodec.rows(for: .init(frame: 12345, wallMilliseconds: 1_772_600_767_123))
        #expect(rows.count == 2 && rows.allSatisfy { $0.count == TimecodeCodec.cellsPerRow })
        #expect(rows[0][3] == false && rows[0][4] == true)
        #expect(rows[1][3] == true && rows[1][4] == false)
    }

    @Test(arguments: [PixelSize(width: 1280, height: 720), PixelSize(width: 320, height: 180),
                      PixelSize(width: 360, height: 640), PixelSize(width: 3840, height: 2160)])
    func theRenderedStripReadsBack(size: PixelSize) throws {
        let s = try SceneLoader.load(path: examplesDir + "/timecode.yaml")
        let renderer = Renderer(scene: s, size: size)
        for frame in [Int64(0), 1, 29, 1_000_003, 0xFF_FFFF_FFFF] {
            let wall = fixedWall + Double(frame % 1000) / 1000
            let surface = try renderer.snapshot(at: FrameTime(frame: frame, media: 0, wall: wall))
            let luma = Luma.plane(of: surface)
            let reading = luma.withUnsafeBytes {
                TimecodeCodec.read(luma: $0, width: size.width, height: size.height, stride: size.width)
            }
            #expect(reading == .init(frame: UInt64(frame), wallMilliseconds: UInt64((wall.timeIntervalSince1970 * 1000).rounded(.down))))
        }
    }

    @Test func aPictureWithoutAStripReadsNothing() throws {
        let renderer = Renderer(scene: DemoScene.load(), size: PixelSize(width: 640, height: 360))
        let surface = try renderer.snapshot(at: time(3))
        let luma = Luma.plane(of: surface)
        #expect(luma.withUnsafeBytes { TimecodeCodec.read(luma: $0, width: 640, height: 360, stride: 640) } == nil)
    }

    @Test func garbageIsNeverMisread() {
        // Random cells on every line: guards, row ids, parity, agreement of lines and the CRC reject them all.
        var rng = SystemRandomNumberGenerator()
        var misreads = 0
        for _ in 0..<3000 {
            var plane = [UInt8](repeating: 0, count: 570 * 40)
            for y in 0..<40 {
                for cell in 0..<57 {
                    let v: UInt8 = Bool.random(using: &rng) ? 235 : 16
                    for x in (cell * 10)..<(cell * 10 + 10) { plane[y * 570 + x] = v }
                }
            }
            if plane.withUnsafeBytes({ TimecodeCodec.read(luma: $0, width: 570, height: 40, stride: 570) }) != nil {
                misreads += 1
            }
        }
        #expect(misreads == 0)
    }
}
