import Foundation
import Testing
@testable import CompositorCore

/// The ladder's playlists and folder rules, without GStreamer.
@Suite struct HLSTests {
    @Test func aMediaPlaylistGivesItsSegmentsAndTarget() {
        let text = """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-MEDIA-SEQUENCE:3
        #EXT-X-TARGETDURATION:1

        #EXTINF:1,
        segment00003.ts
        #EXTINF:0.96666669845581055,
        segment00004.ts
        #EXT-X-ENDLIST
        """
        let (target, segments) = HLSPlaylist.media(text)
        #expect(target == 1)
        #expect(segments == [.init(uri: "segment00003.ts", duration: 1), .init(uri: "segment00004.ts", duration: 0.96666669845581055)])
    }

    @Test func theMasterNamesEveryRungWithItsAttributes() {
        let text = HLSPlaylist.master([
            .init(uri: "main/index.m3u8", bandwidth: 2_511_162, averageBandwidth: 2_225_039,
                  size: PixelSize(width: 1280, height: 720), codecs: "avc1.42C01F,mp4a.40.2", frameRate: 30),
            .init(uri: "416x234/index.m3u8", bandwidth: 441_865, averageBandwidth: nil,
                  size: PixelSize(width: 416, height: 234), codecs: "avc1.42C00D", frameRate: 30),
        ])
        #expect(text == """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-INDEPENDENT-SEGMENTS
        #EXT-X-STREAM-INF:BANDWIDTH=2511162,AVERAGE-BANDWIDTH=2225039,RESOLUTION=1280x720,CODECS="avc1.42C01F,mp4a.40.2",FRAME-RATE=30.000
        main/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=441865,RESOLUTION=416x234,CODECS="avc1.42C00D",FRAME-RATE=30.000
        416x234/index.m3u8

        """)
    }

    @Test func codecNamesComeFromProfileAndLevel() {
        #expect(HLSPlaylist.avc1(profile: "constrained-baseline", level: "3.1") == "avc1.42C01F")
        #expect(HLSPlaylist.avc1(profile: "high", level: "4") == "avc1.640028")
        #expect(HLSPlaylist.avc1(profile: "main", level: "1.3") == "avc1.4D400D")
        #expect(HLSPlaylist.avc1(profile: "high-4:4:4", level: "3") == nil)
        #expect(HLSPlaylist.avc1(profile: "high", level: "x") == nil)
    }

    @Test func aLadderFolderIsNewOrEmpty() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        #expect(try HLSSettings.check(base + "/new").folder == base + "/new")
        #expect(try HLSSettings.check(base, window: 10).playlistLength == 10)
        #expect(try HLSSettings.check(base, window: 3).maxFiles == 4)
        FileManager.default.createFile(atPath: base + "/x.ts", contents: Data())
        #expect(throws: OutputSpec.Invalid.self) { try HLSSettings.check(base) }
        #expect(throws: OutputSpec.Invalid.self) { try HLSSettings.check(base + "/x.ts") }
        #expect(throws: OutputSpec.Invalid.self) { try HLSSettings.check(base + "/a/b") }
        #expect(throws: OutputSpec.Invalid.self) { try HLSSettings.check(base + "/new", window: 2) }
        #expect(HLSSettings.rung(nil) == "main" && HLSSettings.rung(PixelSize(width: 416, height: 234)) == "416x234")
    }
}
