import Testing
@testable import CompositorCore

/// Frames are (source, time) pairs here: what an output would receive.
@Suite struct SourceScheduleTests {
    typealias Frame = String
    var sent: [Frame] = []
    var released: [Frame] = []
    var ended = false
    var switches = 0

    mutating func take(_ o: SourceSchedule<String, Frame>.Outcome) {
        sent += o.send
        released += o.release
        ended = ended || o.ended
        switches += o.switched ? 1 : 0
    }

    mutating func offer(_ s: inout SourceSchedule<String, Frame>, _ source: String, _ time: UInt64) {
        take(s.offer("\(source)\(time)", time: time, from: source))
    }

    /// A fit file moves from the live encoder to a letterboxing one at frame 10; the new one is faster.
    @Test mutating func framesOfTheNewSourceWaitUntilTheOldOneDeliveredItsLast() {
        var s = SourceSchedule<String, Frame>(source: "L", maxHeld: 60)
        offer(&s, "L", 8)
        take(s.switchTo("F", at: 10))
        offer(&s, "F", 10)
        offer(&s, "F", 11)
        offer(&s, "L", 9)
        #expect(sent == ["L8", "L9"])
        offer(&s, "L", 10)
        offer(&s, "F", 12)
        #expect(sent == ["L8", "L9", "F10", "F11", "F12"])
        #expect(released == ["L10"] && switches == 1 && !ended)
    }

    /// Back to the live encoder at 20: the letterboxing encoder is stopped, and its end lets the live frames go.
    @Test mutating func aStoppedSourceHandsOverWhenItEnds() {
        var s = SourceSchedule<String, Frame>(source: "F", maxHeld: 60)
        take(s.switchTo("L", at: 20))
        offer(&s, "F", 19)
        offer(&s, "L", 20)
        offer(&s, "L", 21)
        #expect(sent == ["F19"])
        take(s.ended("F"))
        offer(&s, "L", 22)
        #expect(sent == ["F19", "L20", "L21", "L22"])
    }

    /// A storm: away at 10 and back at 13 before the first switch completed.
    @Test mutating func switchesThatOverlapKeepEveryFrameInOrder() {
        var s = SourceSchedule<String, Frame>(source: "L", maxHeld: 60)
        take(s.switchTo("F", at: 10))
        take(s.switchTo("L", at: 13))
        for t: UInt64 in 10...12 { offer(&s, "F", t) }
        offer(&s, "L", 9)
        offer(&s, "L", 13)
        offer(&s, "L", 14)
        #expect(sent == ["L9", "F10", "F11", "F12"])
        take(s.ended("F"))
        #expect(sent == ["L9", "F10", "F11", "F12", "L13", "L14"])
        // A switch planned later than one that replaces it never happens.
        take(s.switchTo("F", at: 30))
        take(s.switchTo("L", at: 25))
        #expect(s.latest == "L")
    }

    /// The letterboxing encoder of a short detour ends before the live one passed the detour's start.
    @Test mutating func aSourceThatEndedBeforeItsTurnIsSkippedWhenItComes() {
        var s = SourceSchedule<String, Frame>(source: "L", maxHeld: 60)
        take(s.switchTo("F", at: 10))
        take(s.switchTo("L", at: 11))
        offer(&s, "F", 10)
        take(s.ended("F"))
        offer(&s, "L", 9)
        offer(&s, "L", 11)
        offer(&s, "L", 12)
        #expect(sent == ["L9", "F10", "L11", "L12"] && s.gaveUp == 0)
    }

    /// A split: the old part ends at 10, the new part starts there; together they hold every frame once.
    @Test mutating func aSplitCutsAtOneFrame() {
        var old = SourceSchedule<String, Frame>(source: "L", maxHeld: 60)
        var new = SourceSchedule<String, Frame>(source: "L", from: 10, maxHeld: 60)
        take(old.switchTo(nil, at: 10))
        var parts: [[Frame]] = [[], []]
        for t: UInt64 in 8...11 {
            sent = []
            offer(&old, "L", t)
            parts[0] += sent
            sent = []
            offer(&new, "L", t)
            parts[1] += sent
        }
        #expect(parts == [["L8", "L9"], ["L10", "L11"]])
        #expect(ended)
    }

    /// An old source that never catches up is given up on once the held frames reach the bound.
    @Test mutating func heldFramesAreBounded() {
        var s = SourceSchedule<String, Frame>(source: "L", maxHeld: 3)
        take(s.switchTo("F", at: 10))
        for t: UInt64 in 10...13 { offer(&s, "F", t) }
        #expect(sent == ["F10", "F11", "F12", "F13"] && s.gaveUp == 1)
        offer(&s, "L", 9)
        #expect(released == ["L9"])
    }
}
