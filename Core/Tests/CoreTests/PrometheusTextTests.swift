import CompositorCore
import Testing

@Suite struct PrometheusTextTests {
    @Test func aValueOnABoundCountsInThatBucketAndTheRestInInf() {
        var h = BucketCounts(bounds: [0.005, 0.010])
        for v in [0.001, 0.005, 0.0051, 0.010, 3, .nan] { h.observe(v) }
        #expect(h.counts == [2, 2, 1])
        #expect(h.cumulative == [2, 4, 5])
        #expect(h.count == 5)
        #expect(abs(h.sum - 3.0211) < 1e-12)
    }

    @Test func aHistogramIsWrittenAsPrometheusReadsIt() {
        var h = BucketCounts(bounds: [0.5, 1])
        h.observe(0.25)
        h.observe(2)
        var t = PrometheusText()
        t.histogram("x_seconds", "How long.", [("stream", "rtsp://h/\"a\"\\b")], h)
        t.counter("x_total", "Things.", [], 7)
        t.counter("x_total", "Things.", [("k", "v")], 1)
        #expect(t.text == """
        # HELP x_seconds How long.
        # TYPE x_seconds histogram
        x_seconds_bucket{stream="rtsp://h/\\"a\\"\\\\b",le="0.5"} 1
        x_seconds_bucket{stream="rtsp://h/\\"a\\"\\\\b",le="1"} 1
        x_seconds_bucket{stream="rtsp://h/\\"a\\"\\\\b",le="+Inf"} 2
        x_seconds_sum{stream="rtsp://h/\\"a\\"\\\\b"} 2.25
        x_seconds_count{stream="rtsp://h/\\"a\\"\\\\b"} 2
        # HELP x_total Things.
        # TYPE x_total counter
        x_total 7
        x_total{k="v"} 1

        """)
    }

    @Test func theExportedBucketsAscend() {
        for b in [ProbeBuckets.latencySeconds, ProbeBuckets.ssim, ProbeBuckets.avOffsetSeconds] {
            #expect(zip(b, b.dropFirst()).allSatisfy { $0 < $1 })
        }
        #expect(ProbeBuckets.latencySeconds.first! < 0.001 && ProbeBuckets.latencySeconds.last! >= 10)
    }
}
