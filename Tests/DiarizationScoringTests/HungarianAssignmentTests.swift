import DiarizationScoring
import Testing
import DeterministicRandom

@Suite struct HungarianAssignmentTests {
    @Test func matchesBruteForceOnRandomRectangularMatrices() {
        var random = SeededRandom(seed: 42)
        for trial in 0..<600 {
            let rows = 1 + random.index(5)
            let columns = 1 + random.index(5)
            // Small integers half of the time, so that ties and zeros are common.
            let integral = trial.isMultiple(of: 2)
            let weights = (0..<rows).map { _ in
                (0..<columns).map { _ in integral ? Double(random.index(4)) : random.uniform(-2...10) }
            }
            let assignment = HungarianAssignment.maximize(weights)
            #expect(assignment.count == rows)
            let used = assignment.compactMap { $0 }
            #expect(used.count == min(rows, columns), "every row or every column is assigned")
            #expect(Set(used).count == used.count, "one-to-one")
            let total = assignment.enumerated().reduce(0.0) { sum, pair in sum + (pair.1.map { weights[pair.0][$0] } ?? 0) }
            let best = Self.bruteForceBest(weights, row: 0, taken: [])
            #expect(abs(total - best) < 1e-9, "trial \(trial): \(weights) gave \(total), best is \(best)")
        }
    }

    @Test func handlesEmptyAndDegenerateInput() {
        #expect(HungarianAssignment.maximize([]) == [])
        #expect(HungarianAssignment.maximize([[], []]) == [nil, nil])
        #expect(HungarianAssignment.maximize([[3]]) == [0])
        #expect(HungarianAssignment.maximize([[1], [5], [2]]) == [nil, 0, nil])
        #expect(HungarianAssignment.maximize([[1, 9, 2]]) == [1])
    }

    /// The best total over every injective assignment of min(rows, columns) pairs.
    private static func bruteForceBest(_ weights: [[Double]], row: Int, taken: Set<Int>) -> Double {
        let rows = weights.count
        let columns = weights[0].count
        guard row < rows else { return 0 }
        var best = -Double.infinity
        let rowsLeft = rows - row
        let columnsLeft = columns - taken.count
        if rowsLeft > columnsLeft {
            // This row may stay unassigned only when there are more rows than columns left.
            best = bruteForceBest(weights, row: row + 1, taken: taken)
        }
        for column in 0..<columns where !taken.contains(column) {
            best = max(best, weights[row][column] + bruteForceBest(weights, row: row + 1, taken: taken.union([column])))
        }
        return best
    }
}
