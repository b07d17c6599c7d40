/// Builds rows in PostgreSQL's COPY text format: columns separated by tabs, rows by newlines,
/// NULL as `\N`, and backslash, tab, newline and carriage return escaped with a backslash.
public struct PGCopyText {
    public private(set) var bytes: [UInt8] = []
    private var columnInRow = 0

    public init(reservingCapacity capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    private mutating func separate() {
        if columnInRow > 0 { bytes.append(0x09) }
        columnInRow += 1
    }

    public mutating func append(_ value: String?) {
        separate()
        guard let value else {
            bytes.append(contentsOf: [0x5c, 0x4e])   // \N
            return
        }
        for byte in value.utf8 {
            switch byte {
            case 0x5c: bytes.append(contentsOf: [0x5c, 0x5c])
            case 0x09: bytes.append(contentsOf: [0x5c, 0x74])
            case 0x0a: bytes.append(contentsOf: [0x5c, 0x6e])
            case 0x0d: bytes.append(contentsOf: [0x5c, 0x72])
            default: bytes.append(byte)
            }
        }
    }

    public mutating func append(_ value: Double?) {
        append(value.map(\.pgText))
    }

    public mutating func append(_ value: Int?) {
        append(value.map(String.init))
    }

    public mutating func append(_ value: Int64?) {
        append(value.map(String.init))
    }

    public mutating func append(_ value: Bool) {
        append(value ? "t" : "f")
    }

    /// Ends the current row.
    public mutating func endRow() {
        bytes.append(0x0a)
        columnInRow = 0
    }
}
