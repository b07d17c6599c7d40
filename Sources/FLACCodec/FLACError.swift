/// A FLAC stream could not be made or read: a stable `code` to branch on (and to log or count), the
/// libFLAC call or check that failed, and a message for people (libFLAC's own text where it has one).
public struct FLACError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong, in terms a caller can act on. The raw values are stable: they may be logged,
    /// counted or stored, so existing ones are never renamed.
    public enum Code: String, Sendable, CaseIterable {
        /// libFLAC could not allocate an encoder, a decoder or their buffers.
        case outOfMemory
        /// The encoder refused its settings (a sample rate FLAC cannot carry, say).
        case invalidConfiguration
        /// Encoding failed, or the encoder was used after `finish()`.
        case encodingFailed
        /// A well-formed FLAC stream this module does not read: only 16-bit mono is stored.
        case unsupportedFormat
        /// Not a FLAC stream, or one that is damaged or cut short.
        case corruptStream
        /// The decoder failed for a reason other than its input.
        case decodingFailed
    }

    public let code: Code
    /// The libFLAC function, or the check of this module, that failed.
    public let function: String
    public let message: String

    public init(_ code: Code, function: String, message: String) {
        self.code = code
        self.function = function
        self.message = message
    }

    public var description: String { "\(function) failed: \(message) (\(code.rawValue))" }
}
