import Foundation
import Testing
@testable import Compositor

/// A fleet report's rates are taken over the targets' scrape interval, which Prometheus gives as a duration.
@Suite struct PrometheusDurationTests {
    @Test func readsTheDurationsPrometheusWrites() {
        #expect(PrometheusSoakReport.seconds(of: "15s") == 15)
        #expect(PrometheusSoakReport.seconds(of: "1m30s") == 90)
        #expect(PrometheusSoakReport.seconds(of: "2h") == 7200)
        for bad in ["", "15", "s", "1.5s", "15ms", "-5s"] {
            #expect(PrometheusSoakReport.seconds(of: bad) == nil, "\(bad)")
        }
    }

    @Test func ratesSpanAtLeastFourScrapes() {
        var r = PrometheusSoakReport(prometheus: URL(string: "http://127.0.0.1:9090")!, from: Date(timeIntervalSince1970: 0),
                                     to: Date(timeIntervalSince1970: 600))
        r.scrapeSeconds = 15
        #expect(r.stepSeconds == 15 && r.window == "60s")
        r.scrapeSeconds = 1
        #expect(r.stepSeconds == 1 && r.window == "4s")
    }
}
