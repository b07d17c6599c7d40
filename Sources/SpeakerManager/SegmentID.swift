/// Identifies the speech segment a raw embedding came from, so a misattributed segment can later be moved
/// to another speaker (`reassignSegment`). The manager numbers segments 1, 2, 3… when the caller gives none;
/// a caller that has its own segment numbering passes it instead.
public struct SegmentID: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: SegmentID, rhs: SegmentID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "seg\(rawValue)" }
}
