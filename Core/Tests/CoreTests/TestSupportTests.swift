import Foundation
import Testing
import TestSupport
@testable import CompositorCore

/// The shared test support's waits and inline scenes: a poll returns as soon as its condition holds, reports or
/// names a timeout, and checks once more at the end; a scene from text is parsed as a file would be.
@Suite struct TestSupportTests {
    /// A counter the condition reads; counts its own checks.
    final class Checks: @unchecked Sendable {
        var count = 0
    }

    @Test func aPollReturnsAtTheCheckWhereItsConditionHolds() {
        let checks = Checks()
        let held = poll(until: { checks.count += 1; return checks.count == 3 }, timeout: 10, every: 0.001)
        #expect(held)
        #expect(checks.count == 3)
    }

    @Test func aPollThatRunsOutReturnsFalseAfterItsTimeoutAndAFinalCheck() {
        let checks = Checks()
        let started = Date()
        let held = poll(until: { checks.count += 1; return false }, timeout: 0.05, every: 0.01)
        #expect(!held)
        #expect(Date().timeIntervalSince(started) >= 0.05)
        #expect(checks.count >= 2, "checked while waiting and once at the end: \(checks.count)")
    }

    @Test func aConditionThatHoldsAtTheLastCheckCounts() {
        let deadline = Date().addingTimeInterval(0.03)
        #expect(poll(until: { Date() >= deadline }, timeout: 0.03, every: 1))
    }

    @Test func aNamedPollThatRunsOutThrowsWhatItWaitedFor() {
        var state = "empty"
        #expect(throws: PollTimedOut.self) {
            try poll("the queue to fill (\(state))", until: { state = "still empty"; return false }, timeout: 0.02)
        }
        do {
            try poll("the queue to fill (\(state))", until: { false }, timeout: 0.01)
            Issue.record("no timeout")
        } catch let e as PollTimedOut {
            #expect(e.what == "the queue to fill (still empty)", "named as things stood at the timeout")
            #expect("\(e)" == "waited 0.01 s for the queue to fill (still empty), in vain")
        } catch {
            Issue.record("\(error)")
        }
        #expect(throws: Never.self) { try poll("a condition that holds", until: { true }, timeout: 0) }
    }

    @Test func aConditionsErrorEndsThePoll() {
        struct Broken: Error {}
        let checks = Checks()
        #expect(throws: Broken.self) {
            try poll(until: { checks.count += 1; throw Broken() }, timeout: 10)
        }
        #expect(checks.count == 1)
    }

    @Test func anAsyncPollWaitsWithoutHoldingItsThread() async throws {
        let checks = Checks()
        #expect(try await pollAsync(until: { checks.count += 1; return checks.count == 2 }, timeout: 10, every: 0.001))
        #expect(try await !pollAsync(until: { false }, timeout: 0.02, every: 0.005))
    }

    @Test func anInlineSceneIsParsedWithItsNameInMessagesAndNoMediaChecks() throws {
        let s = try scene("title: T\nwidgets:\n  - {type: image, source: pics/missing.png}\n")
        #expect(s.title == "T" && s.widgets.count == 1)
        do {
            _ = try scene("widgets:\n  - {type: nope}\n", file: "named.yaml")
            Issue.record("parsed")
        } catch let e as SceneError {
            #expect(e.file == "named.yaml" && e.line == 2, "\(e)")
        }
    }
}
