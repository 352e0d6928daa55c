import Foundation
import Testing
@testable import Compositor

/// A page started again is given what the one before was told (`PageReplay`): the data, merged field by field for
/// JSON objects, and whether it was stopped.
@Suite struct PageReplayTests {
    @Test func jsonFieldsAreMergedTheNewestWinning() {
        let r = PageReplay(data: #"{"home":"LYN","h":0}"#)
        r.called("update", #"{"h":2,"clock":"67:12"}"#)
        r.called("update", #"{"clock":"67:13"}"#)
        #expect(r.state.data == #"{"clock":"67:13","h":2,"home":"LYN"}"#)
        #expect(r.state.playing)
    }

    @Test func anythingElseIsKeptAsItCame() {
        let xml = #"<templateData><componentData id="f0"><data id="text" value="Jane"/></componentData></templateData>"#
        let r = PageReplay(data: #"{"f0":"Bob"}"#)
        r.called("update", xml)
        #expect(r.state.data == xml)
        r.called("update", #"{"f0":"Ann"}"#)
        #expect(r.state.data == #"{"f0":"Ann"}"#)
        r.called("update", "[1,2]")
        #expect(r.state.data == "[1,2]")
        #expect(PageReplay(data: nil).state.data == nil)
    }

    @Test func playAndStopAreKeptOtherCallsAreNot() {
        let r = PageReplay(data: nil)
        r.called("stop", nil)
        #expect(!r.state.playing)
        r.called("next", nil)
        r.called("highlight", "x")
        #expect(!r.state.playing && r.state.data == nil)
        r.called("play", nil)
        #expect(r.state.playing)
        r.called("remove", nil)
        #expect(!r.state.playing)
    }

    /// A launch that loaded with an older state is told what changed: the version moves with what a page is given.
    @Test func theVersionMovesWithWhatAPageIsGiven() {
        let r = PageReplay(data: nil)
        let first = r.versioned.version
        r.called("next", nil)
        r.called("highlight", "x")
        #expect(r.versioned.version == first)
        r.called("update", "{}")
        let second = r.versioned.version
        #expect(second != first)
        r.called("stop", nil)
        #expect(r.versioned.version != second && !r.versioned.playing)
    }
}
