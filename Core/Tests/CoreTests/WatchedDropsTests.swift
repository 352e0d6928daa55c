import Testing
@testable import CompositorCore

/// An RTSP media's drops count only while a viewer plays it.
@Suite struct WatchedDropsTests {
    @Test func dropsBeforeThePlayAndDuringAPauseAreLeftOut() {
        var d = WatchedDrops()
        // Described, not played: its queue fills and drops what it is offered.
        #expect(d.counted(dropsNow: 40) == 0)
        d.playing(true, dropsNow: 40)
        #expect(d.counted(dropsNow: 43) == 3)
        d.playing(false, dropsNow: 45)
        #expect(d.counted(dropsNow: 100) == 5)
        // The same news twice changes nothing.
        d.playing(false, dropsNow: 100)
        d.playing(true, dropsNow: 120)
        d.playing(true, dropsNow: 121)
        #expect(d.counted(dropsNow: 122) == 7)
    }
}
