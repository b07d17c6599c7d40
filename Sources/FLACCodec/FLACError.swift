/// A FLAC failure with a stable code.
public struct FLACError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// libFLAC could not be set up or refused the parameters (a sample rate FLAC cannot carry).
        case encoderFailed = "encoder_failed"
        /// A valid stream, but not what is stored here: mono 16-bit.
        case unsupportedFormat = "unsupported_format"
        /// Not a FLAC stream, or a damaged or truncated one.
        case corruptStream = "corrupt_stream"
        case outOfMemory = "out_of_memory"
    }
    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
