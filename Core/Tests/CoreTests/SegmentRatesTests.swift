import Testing
@testable import CompositorCore

/// A rung's rates over a long live run: what is remembered stays the playlist's window, the average covers the run.
@Suite struct SegmentRatesTests {
    @Test func aDayOfSegmentsIsRememberedAsItsWindowAndAveragedWhole() {
        var rates = SegmentRates()
        // A day of 1 s segments through a window of 6; segment n has 1000 + n % 7 bytes.
        let bytes = { (n: Int) in Double(1000 + n % 7) }
        var total = 0.0
        for newest in 0..<86_400 {
            let listed = (max(0, newest - 5)...newest).map { HLSPlaylist.Segment(uri: "segment\($0).ts", duration: 1) }
            rates.update(listed: listed) { uri in bytes(Int(uri.dropFirst(7).dropLast(3))!) }
            total += bytes(newest) * 8
            #expect(rates.remembered <= 6)
        }
        #expect(abs(rates.average! - total / 86_400) < 1e-6)
        #expect(rates.peak == Double(1006 * 8))
    }

    @Test func aSegmentNotReadableYetIsCountedWhenItIs() {
        var rates = SegmentRates()
        let listed = [HLSPlaylist.Segment(uri: "a.ts", duration: 2)]
        rates.update(listed: listed) { _ in nil }
        #expect(rates.average == nil && rates.peak == nil)
        rates.update(listed: listed) { _ in 500 }
        rates.update(listed: listed) { _ in 500 }
        #expect(rates.average == 2000 && rates.peak == 2000)
    }
}
