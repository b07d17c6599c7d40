/// A protocol violation or server-side failure, reported to the client as an `error` frame.
public struct ProtocolError: Error, Hashable, Sendable {
    public var code: ProtocolErrorCode
    /// Human-readable detail; names the offending field where there is one. Not meant to be parsed.
    public var message: String

    public init(_ code: ProtocolErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    static func missing(_ field: String, in context: String) -> ProtocolError {
        ProtocolError(.missingField, "\(context): missing field \"\(field)\"")
    }

    static func invalid(_ field: String, in context: String, _ detail: String) -> ProtocolError {
        ProtocolError(.invalidField, "\(context): field \"\(field)\" \(detail)")
    }
}
