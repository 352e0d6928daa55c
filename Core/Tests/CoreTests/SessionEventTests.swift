import Foundation
import Testing
@testable import CompositorCore

/// Events are typed where they happen; the wire and the docs agree with the type.
@Suite struct SessionEventTests {
    /// docs/openapi.yaml's Event.type enum lists exactly the kinds there are.
    @Test func theAPIDocumentListsEveryKindOfEvent() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/docs/openapi.yaml", encoding: .utf8)
        let start = try #require(text.range(of: "    Event:"))
        let tail = text[start.upperBound...]
        let enumStart = try #require(tail.range(of: "enum: ["))
        let enumEnd = try #require(tail[enumStart.upperBound...].range(of: "]"))
        let listed = tail[enumStart.upperBound..<enumEnd.lowerBound]
            .split(whereSeparator: { $0 == "," || $0.isWhitespace }).map(String.init)
        let kinds = Set(SessionEvent.Kind.allCases.map(\.rawValue))
        #expect(Set(listed) == kinds,
                "in the docs only: \(Set(listed).subtracting(kinds)); undocumented: \(kinds.subtracting(listed))")
        #expect(listed.count == Set(listed).count, "listed twice")
    }

    /// The details keep the names and formats clients have read (ctl events, the page, the tests).
    @Test func detailsOnTheWire() {
        #expect(SessionEvent.didStop(output: "record:/a.mp4", finalized: false).details
                == ["output": "record:/a.mp4", "finalized": "false"])
        #expect(SessionEvent.resized(PixelSize(width: 480, height: 270)).details == ["width": "480", "height": "270"])
        #expect(SessionEvent.skippedTrack(track: 2, forward: false).kind == .skipped)
        #expect(SessionEvent.viewerLeft(.webrtc(session: "viewer1", viewers: 0, reason: "gone")).details
                == ["kind": "webrtc", "session": "viewer1", "webrtcViewers": "0", "reason": "gone"])
        #expect(SessionEvent.widgetUpdated(id: "memo", properties: ["items", "text"]).details["properties"] == "items,text")
        #expect(SessionEvent.inputLost(id: "cam", source: "rtsp://x", reason: "eos", retryInSeconds: 2).logLine
                == "video 'cam': lost (eos); retrying in 2 s")
        #expect(SessionEvent.viewerJoined(.rtsp(viewers: 2)).logLine == "rtsp: 2 viewer(s)")
        #expect(SessionEvent.firstFrame.logLine == nil)
    }
}
