/// A libopus call failed: which call, and libopus's negative return code (OPUS_BAD_ARG…).
public struct OpusError: Error, CustomStringConvertible, Sendable, Equatable {
    public let function: String
    public let code: Int32
    /// libopus's own text for `code` (opus_strerror).
    public let message: String

    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { "\(function) failed: \(message) (\(code))" }
}
