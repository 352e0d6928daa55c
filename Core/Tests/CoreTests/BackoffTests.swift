import CompositorCore
import Testing

@Suite struct BackoffTests {
    @Test func doublesUpToTheLimit() {
        var b = Backoff(first: 1, limit: 30)
        let delays = (0..<8).map { _ in b.failed() }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30, 30])
    }

    @Test func aLimitBelowTheDoublingIsHeld() {
        var b = Backoff(first: 1, limit: 8)
        #expect((0..<5).map { _ in b.failed() } == [1, 2, 4, 8, 8])
    }

    @Test func resetStartsOver() {
        var b = Backoff()
        _ = b.failed(); _ = b.failed(); _ = b.failed()
        #expect(b.upcoming == 8)
        b.reset()
        #expect(b.failed() == 1)
        #expect(b.upcoming == 2)
    }

    @Test func aRunLongerThanHealthyStartsOver() {
        var b = Backoff(first: 1, limit: 30, healthyAfter: 10)
        #expect(b.failed(afterRunning: 0.5) == 1)
        #expect(b.failed(afterRunning: 2) == 2)
        #expect(b.failed(afterRunning: 10) == 4, "exactly the healthy time is not longer than it")
        #expect(b.failed(afterRunning: 60) == 1)
        #expect(b.failed(afterRunning: 1) == 2)
    }

    @Test func withoutAHealthyTimeOnlyResetStartsOver() {
        var b = Backoff(first: 1, limit: 30)
        _ = b.failed(afterRunning: 1000)
        #expect(b.failed(afterRunning: 1000) == 2)
    }
}
