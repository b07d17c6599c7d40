/// Stable identifier of an utterance within one conversation; "u<N>" on the wire.
///
/// Ids come from a per-conversation counter and are never reused, so a client can key its view by them.
/// Raw value 0 is never handed out (the merger uses it internally for "not yet grouped").
public struct UtteranceID: Hashable, Comparable, Sendable, RawRepresentable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    public init(_ rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Parses the wire form "u<N>".
    public init?(wireString: String) {
        guard wireString.first == "u", let value = UInt64(wireString.dropFirst()) else { return nil }
        self.rawValue = value
    }

    /// The wire form "u<N>".
    public var wireString: String { "u\(rawValue)" }

    public var description: String { wireString }

    public static func < (lhs: UtteranceID, rhs: UtteranceID) -> Bool { lhs.rawValue < rhs.rawValue }
}
