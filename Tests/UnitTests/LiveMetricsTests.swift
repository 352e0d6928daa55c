import Foundation
import Testing
@testable import Compositor

@Suite struct LiveMetricsTests {
    func status(_ outputs: [(String, UInt64)], earlier: LiveSession.Status.Earlier? = nil) -> LiveSession.Status {
        var s = LiveSession.Status(size: PixelSize(width: 320, height: 180), frame: 0, rendered: 0, repeated: 0, late: 0,
                                   encoderDropped: 0, encoded: 0,
                                   outputs: outputs.map { .init(id: $0.0, state: "running", delivered: $0.1, dropped: 0, bytes: $0.1 * 10) },
                                   viewers: 0, uptime: 0)
        s.restarts = outputs.map { ($0.0, 0) }
        s.earlier = earlier
        return s
    }

    /// The value of `metric` for `output` in exposition text.
    func value(_ text: String, _ metric: String, _ output: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix("\(metric){output=\"\(output)\"}") }
            .flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    /// An output folded into the run's earlier outputs loses its series; the series `earlier` carries on only what it
    /// did after its last scrape, so a sum of increases over the outputs' series counts every frame once.
    @Test func aFoldedOutputsCountsAreCountedOnce() {
        let metrics = LiveMetrics()
        let a = "record:/metrics-test-\(UUID().uuidString)-a.mkv", b = "record:/metrics-test-\(UUID().uuidString)-b.mkv"
        let first = metrics.scrape(status([(a, 100), (b, 50)]), queued: 0)
        #expect(value(first, "pipcompose_output_frames_total", a) == 100)
        // Then a ends at 120 frames and is folded; b goes on.
        var folded = LiveSession.Status.Earlier()
        (folded.outputs, folded.delivered, folded.bytes) = (1, 120, 1200)
        let second = metrics.scrape(status([(b, 60)], earlier: folded), queued: 0)
        #expect(value(second, "pipcompose_output_frames_total", a) == nil, "its series is gone")
        #expect(value(second, "pipcompose_output_frames_total", "earlier") == 20, "\(second)")
        #expect(value(second, "pipcompose_output_bytes_total", "earlier") == 200)
        #expect(value(second, "pipcompose_output_frames_total", b) == 60)
        // Folded outputs never scraped on their own are carried whole.
        folded.outputs += 1
        folded.delivered += 30
        let third = metrics.scrape(status([(b, 70)], earlier: folded), queued: 0)
        #expect(value(third, "pipcompose_output_frames_total", "earlier") == 50)
    }
}
