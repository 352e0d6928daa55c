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

    /// Each link listed has its `pipcompose_link_viewers` series; a link the list no longer holds (the oldest ended
    /// ones are forgotten) loses them at the next scrape, so a run that makes links all day keeps a bounded set.
    @Test func aForgottenLinksSeriesAreRemoved() throws {
        _ = LiveMetrics.registry
        let clock = Clock()
        let links = WatchLinks(now: { clock.now }, mostLive: 10, endedKept: 1)
        let viewers = LinkViewers(now: { clock.now })
        // Ids count from w1 in every WatchLinks, and the registry is the process's: go past the ids the other tests'
        // runs make, so that their scrapes do not touch this test's series.
        for _ in 0..<2000 { try links.revoke(try links.create().id) }
        let first = try links.create(), second = try links.create()
        func series() -> [String] {
            LiveMetrics.registry.emitToString().split(separator: "\n").map(String.init)
                .filter { $0.hasPrefix("pipcompose_link_viewers{") && ($0.contains("\"\(first.id)\"") || $0.contains("\"\(second.id)\"")) }
        }
        viewers.notePlayer(link: second.id, from: nil)
        viewers.record(links.all, openSessions: [], rtsp: [first.id: 2])
        #expect(series().count == 6, "\(series())")
        #expect(series().contains { $0.contains("\"\(first.id)\"") && $0.contains("\"rtsp\"")
                                    && Double($0.split(separator: " ").last ?? "") == 2 }, "\(series())")
        try links.revoke(first.id)
        clock.pass(1)
        try links.revoke(second.id)
        #expect(links.all.map(\.id) == [second.id], "the first to end is forgotten past the one kept")
        viewers.record(links.all, openSessions: [], rtsp: [:])
        #expect(series().count == 3 && series().allSatisfy { $0.contains("\"\(second.id)\"") }, "\(series())")
    }
}
