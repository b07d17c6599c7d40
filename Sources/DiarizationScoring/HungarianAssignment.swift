/// Optimal one-to-one assignment (Kuhn–Munkres with potentials, O(n²·m) for n ≤ m), the step that
/// maps hypothesis speakers to reference speakers in every metric here.
public enum HungarianAssignment {
    /// The row → column assignment with the largest total weight, as scipy's
    /// `linear_sum_assignment(maximize=True)`: every row gets a column when there are at least as many
    /// columns as rows, otherwise every column gets a row and the other rows get nil. Zero and negative
    /// weights are assigned too; callers that want only positive pairs filter them.
    /// Ragged rows are padded with zeros; non-finite weights count as zero.
    public static func maximize(_ weights: [[Double]]) -> [Int?] {
        let rows = weights.count
        let columns = weights.map(\.count).max() ?? 0
        guard rows > 0, columns > 0 else { return Array(repeating: nil, count: rows) }
        func weight(_ row: Int, _ column: Int) -> Double {
            guard column < weights[row].count, weights[row][column].isFinite else { return 0 }
            return weights[row][column]
        }
        if rows <= columns {
            let columnOfRow = minimizeCost(rows: rows, columns: columns) { -weight($0, $1) }
            return columnOfRow.map { Optional($0) }
        }
        let rowOfColumn = minimizeCost(rows: columns, columns: rows) { -weight($1, $0) }
        var result = [Int?](repeating: nil, count: rows)
        for (column, row) in rowOfColumn.enumerated() { result[row] = column }
        return result
    }

    /// Shortest augmenting paths with row and column potentials; requires rows ≤ columns and returns
    /// the column of every row.
    private static func minimizeCost(rows: Int, columns: Int, cost: (Int, Int) -> Double) -> [Int] {
        // 1-based as in the classical formulation; index 0 is the virtual start column.
        var rowPotential = [Double](repeating: 0, count: rows + 1)
        var columnPotential = [Double](repeating: 0, count: columns + 1)
        var rowOfColumn = [Int](repeating: 0, count: columns + 1)
        var previousColumn = [Int](repeating: 0, count: columns + 1)
        var matrix = [Double](repeating: 0, count: rows * columns)
        for row in 0..<rows { for column in 0..<columns { matrix[row * columns + column] = cost(row, column) } }

        for row in 1...rows {
            rowOfColumn[0] = row
            var column0 = 0
            var minimum = [Double](repeating: .infinity, count: columns + 1)
            var used = [Bool](repeating: false, count: columns + 1)
            repeat {
                used[column0] = true
                let row0 = rowOfColumn[column0]
                var delta = Double.infinity
                var column1 = 0
                for column in 1...columns where !used[column] {
                    let reduced = matrix[(row0 - 1) * columns + (column - 1)] - rowPotential[row0] - columnPotential[column]
                    if reduced < minimum[column] {
                        minimum[column] = reduced
                        previousColumn[column] = column0
                    }
                    if minimum[column] < delta {
                        delta = minimum[column]
                        column1 = column
                    }
                }
                for column in 0...columns {
                    if used[column] {
                        rowPotential[rowOfColumn[column]] += delta
                        columnPotential[column] -= delta
                    } else {
                        minimum[column] -= delta
                    }
                }
                column0 = column1
            } while rowOfColumn[column0] != 0
            repeat {
                let column1 = previousColumn[column0]
                rowOfColumn[column0] = rowOfColumn[column1]
                column0 = column1
            } while column0 != 0
        }
        var columnOfRow = [Int](repeating: 0, count: rows)
        for column in 1...columns where rowOfColumn[column] != 0 {
            columnOfRow[rowOfColumn[column] - 1] = column - 1
        }
        return columnOfRow
    }
}
