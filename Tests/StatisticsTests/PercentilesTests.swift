import Testing
import Statistics

@Suite struct PercentilesTests {
    @Test func nearestRankPercentiles() {
        let values = (1 ... 100).map(Double.init)
        let p = Percentiles(values.shuffled())
        #expect(p.p50 == 50 && p.p95 == 95 && p.p99 == 99 && p.max == 100 && p.count == 100)
        #expect(Percentiles([]).p50 == nil)
        #expect(Percentiles([7]).p99 == 7)
    }

    /// NaN and infinities (a failed measurement) are not ranked.
    @Test func valuesThatAreNotFiniteAreLeftOut() {
        let p = Percentiles([1, .nan, 3, .infinity, 2])
        #expect(p.count == 3 && p.p50 == 2 && p.max == 3)
    }
}
