/// A parsed JSON value.
///
/// The protocol parses client messages with its own strict RFC 8259 parser (`JSONParser`) instead of
/// `JSONSerialization`, because Foundation's `NSNumber` bridging cannot tell `true` from `1`, and a
/// field such as `"final": 1` must be rejected as `invalid_field`, not read as a Bool.
/// Numbers are Doubles: integers and fractions are both accepted wherever a number is expected.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// A short name of the JSON type, used in error messages ("expected a number, got a string").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
