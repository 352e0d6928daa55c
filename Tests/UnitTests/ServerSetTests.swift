import Foundation
import Testing
@testable import Compositor

/// The session asks its servers as one set: a kind of viewer-serving output needs only to conform to
/// `ViewerOutput` for its viewers, the pictures it wants and its ending to count. The kind below is made here and
/// nowhere else.
@Suite struct ServerSetTests {
    /// A server of a kind the session has never heard of: its viewers and wanted pictures are set by the test.
    final class Kiosk: ViewerOutput, @unchecked Sendable {
        let id: String
        var viewerCount = 0
        var wantsMain = false
        var wantedRenditions: Set<PixelSize> = []
        var opened = false
        var finished = false
        var failsToOpen = false
        init(_ id: String) { self.id = id }
        var stateText: String { "serving \(viewerCount) kiosk viewer(s)" }
        var delivered: UInt64 { 0 }
        var dropped: UInt64 { 0 }
        var bytes: UInt64 { 0 }
        struct Refused: Error {}
        func open() throws {
            if failsToOpen { throw Refused() }
            opened = true
        }
        func feed(from encoder: Encoder) {}
        func hear(_ track: AudioTrack) {}
        func serve(from sources: ServingSources) {}
        func finish(timeout: TimeInterval) -> OutputEnding {
            finished = true
            return .finalized
        }
    }

    let small = PixelSize(width: 416, height: 234), large = PixelSize(width: 640, height: 360)

    @Test func viewersAndWantedPicturesAreTheSetsWhateverTheKind() {
        let set = ServerSet()
        let a = Kiosk("a"), b = Kiosk("b")
        set.add(a)
        set.add(b)
        #expect(set.viewerCount == 0)
        #expect(!set.wantsMain)
        #expect(set.wantedRenditions.isEmpty)
        a.viewerCount = 2
        b.viewerCount = 3
        b.wantsMain = true
        a.wantedRenditions = [small]
        b.wantedRenditions = [small, large]
        #expect(set.viewerCount == 5)
        #expect(set.wantsMain)
        #expect(set.wantedRenditions == [small, large])
        #expect(set.first(Kiosk.self) === a)
        #expect(set.first(RTSPOutput.self) == nil)
    }

    @Test func aServerThatCannotOpenEndsThoseOpenedBeforeIt() {
        let set = ServerSet()
        let a = Kiosk("a"), b = Kiosk("b"), c = Kiosk("c")
        b.failsToOpen = true
        for k in [a, b, c] { set.add(k) }
        #expect(throws: Kiosk.Refused.self) { try set.open() }
        #expect(a.opened && a.finished)
        #expect(!c.opened && !c.finished)
    }

    @Test func finishingEndsEveryServer() throws {
        let set = ServerSet()
        let a = Kiosk("a"), b = Kiosk("b")
        set.add(a)
        set.add(b)
        try set.open()
        set.finish(timeout: 1)
        #expect(a.finished && b.finished)
    }
}
