import Foundation
import Testing
import TestSupport
@testable import Compositor

/// Reading playlists and the ring between the music decoder and the frame loop, without GStreamer.
@Suite struct PlaylistTests {
    @Test func aPlaylistIsOnePathOrURIALineRelativeToItsFolder() {
        let text = "\u{FEFF}#EXTM3U\n#EXTINF:123,Some title\nsongs/a.mp3\r\n\n  /abs/b.flac  \nhttp://radio.example/c.ogg\n~/d.wav\n"
        let entries = Playlist.entries(ofPlaylist: text, named: "set.m3u", folder: "/music")
        #expect(entries.map(\.location) == ["/music/songs/a.mp3", "/abs/b.flac", "http://radio.example/c.ogg", "~/d.wav"])
        #expect(entries.map(\.origin) == ["set.m3u line 3", "set.m3u line 5", "set.m3u line 6", "set.m3u line 7"])
        #expect(Playlist.entries(ofPlaylist: "# only comments\n\n", named: "x.m3u", folder: "/").isEmpty)
    }

    @Test func theRingKeepsOrderAcrossItsEndAndNeverHoldsMoreThanItsSize() {
        var ring = SampleRing(frames: 5, channels: 2)
        let first: [Int16] = (0..<8).map { Int16($0) }            // 4 frames
        #expect(first.withUnsafeBufferPointer { ring.write($0) } == 4)
        var out = [Int16](repeating: -1, count: 6)                 // 3 frames
        #expect(out.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 3)
        #expect(out == [0, 1, 2, 3, 4, 5])
        let second: [Int16] = (8..<20).map { Int16($0) }           // 6 frames offered, 4 fit (1 left + 4 free)
        #expect(second.withUnsafeBufferPointer { ring.write($0) } == 4)
        #expect(ring.count == 5 && ring.free == 0)
        var all = [Int16](repeating: -1, count: 14)
        #expect(all.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 5)
        #expect(Array(all[0..<10]) == [6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
        #expect(ring.count == 0)
        ring.removeAll()
        #expect(ring.free == 5)
    }

    @Test func musicIsNamedByAnythingThatIsNotASignal() throws {
        #expect(try AudioChoice.parse("~/Music/set.m3u") == .music(source: "~/Music/set.m3u"))
        #expect(try AudioChoice.parse("Ticks") == .ticks)
        #expect(AudioChoice.music(source: "a.mp3").description == "a.mp3")
    }
}
