import Foundation
import Testing
@testable import CompositorCore

/// `render --cues FILE`: data changes on the timeline, read with YAML's types and every mistake placed.
@Suite struct CuesTests {
    @Test func cuesLandOnTheFirstFrameAtOrAfterTheirTime() throws {
        let cues = try Cues.parse("""
        - {at: 1.5, widget: lower, set: {text: "Jane Doe", visible: true}}
        - frame: 7
          widget: score
          set: {home: 2, away: "3", items: [a, b]}
        - {at: 0.1, widget: clock, set: {timezone: Asia/Tokyo}}
        """, file: "cues.yaml")
        #expect(cues.count == 3)
        #expect(cues[0].frame(fps: 30) == 45 && cues[0].frame(fps: 25) == 38 && cues[2].frame(fps: 30) == 3)
        #expect(cues[1].frame(fps: 30) == 7 && cues[1].when == .frame(7))
        #expect(cues[0].properties == ["text": .string("Jane Doe"), "visible": .bool(true)])
        #expect(cues[1].properties == ["home": .number(2), "away": .string("3"),
                                       "items": .array([.string("a"), .string("b")])])
        #expect(cues[0].place == "cues.yaml:1:3" && cues[1].place == "cues.yaml:2:3")
    }

    @Test func mistakesSayWhereAndWhatWasExpected() {
        let cases: [(String, String)] = [
            ("- {widget: a, set: {text: x}}", "cues.yaml:1:3: [0]: a cue needs one of 'at'"),
            ("- {at: 1, frame: 2, widget: a, set: {text: x}}", "one of 'at' (scene seconds) or 'frame'"),
            ("- {at: -1, widget: a, set: {text: x}}", "[0].at"),
            ("- {at: 1, set: {text: x}}", "a cue needs 'widget'"),
            ("- {at: 1, widget: a}", "a cue needs 'set'"),
            ("- {at: 1, widget: a, set: hello}", "'set' must be a mapping"),
            ("- {at: 1, widget: a, set: {text: x}, when: now}", "unknown key 'when' in a cue"),
            ("{at: 1}", "expected a list"),
            ("- {at: 1, widget: a, set: {text: [x}", "cues.yaml:1"),
            ("", "no cues"),
        ]
        for (text, message) in cases {
            #expect(throws: SceneError.self, "\(text)") { try Cues.parse(text, file: "cues.yaml") }
            do { _ = try Cues.parse(text, file: "cues.yaml") } catch {
                #expect(error.description.contains(message), "\(text): \(error.description)")
            }
        }
    }
}
