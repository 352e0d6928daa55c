import Foundation
import Testing
@testable import Compositor

@Suite struct LinkViewersTests {
    /// A clock the test moves.
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var at = Date(timeIntervalSince1970: 1_000_000)
        var now: Date { lock.withLock { at } }
        func pass(_ seconds: TimeInterval) { lock.withLock { at += seconds } }
    }

    /// HLS players are kept by link, and an auth hook makes a link of each identity it lets in: a day of viewers each
    /// with a token of their own would leave a map per identity. Those nobody played through within the window go.
    @Test func linksNobodyPlaysThroughAreForgotten() {
        let clock = Clock()
        let viewers = LinkViewers(now: { clock.now })
        for i in 0..<100 { viewers.notePlayer(link: "hook:viewer\(i)", from: nil) }
        #expect(viewers.linksWithPlayers == 100)
        #expect(viewers.players(of: "hook:viewer7") == 1)
        clock.pass(LinkViewers.playerWindow + 1)
        viewers.notePlayer(link: "hook:late", from: nil)
        #expect(viewers.linksWithPlayers == 1)
        #expect(viewers.players(of: "hook:late") == 1 && viewers.players(of: "hook:viewer7") == 0)
    }
}
