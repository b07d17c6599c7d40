/// The rows of one statement. Owns the libpq result and frees it (PQclear) when released.
/// Not thread-safe; decode it on the thread that ran the query.
public final class PGResult {
    private let raw: LibPQ.Result
    public let rowCount: Int
    public let columnNames: [String]
    /// Rows changed by INSERT/UPDATE/DELETE (PQcmdTuples); 0 for other statements.
    public let affectedRows: Int
    private let columnIndexes: [String: Int]

    init(raw: LibPQ.Result) {
        self.raw = raw
        rowCount = LibPQ.rowCount(raw)
        let names = (0..<LibPQ.columnCount(raw)).map { LibPQ.columnName(raw, $0) }
        columnNames = names
        affectedRows = LibPQ.affectedRows(raw)
        var indexes: [String: Int] = [:]
        for (index, name) in names.enumerated() where indexes[name] == nil { indexes[name] = index }
        columnIndexes = indexes
    }

    deinit { LibPQ.clear(raw) }

    public var rows: [PGRow] { (0..<rowCount).map { PGRow(result: self, index: $0) } }

    public subscript(row: Int) -> PGRow {
        precondition(row >= 0 && row < rowCount, "row \(row) out of range 0..<\(rowCount)")
        return PGRow(result: self, index: row)
    }

    func text(row: Int, column: String) throws -> String? {
        guard let columnIndex = columnIndexes[column] else {
            throw PGError(code: .decodeFailed,
                          message: "no column \"\(column)\" in result (columns: \(columnNames.joined(separator: ", ")))",
                          column: column)
        }
        return LibPQ.value(raw, row: row, column: columnIndex)
    }
}

/// One row of a `PGResult`; decode columns by name.
public struct PGRow {
    let result: PGResult
    public let index: Int

    /// Decodes `column` as `T`. Errors are `decode_failed` and name the column.
    public func decode<T: PGDecodable>(_ type: T.Type, column: String) throws -> T {
        try T.pgDecode(text: result.text(row: index, column: column), column: column)
    }
}
