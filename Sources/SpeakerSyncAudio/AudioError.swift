/// A failure while decoding, encoding or resampling audio.
///
/// `code` is stable and meant to be shown to machines (logs, protocol error frames, tests);
/// `message` is for people and may change.
public struct AudioError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The file does not start with a RIFF header.
        case notRIFF = "not_riff"
        /// RIFF, but the form type is not WAVE.
        case notWAVE = "not_wave"
        /// No `fmt ` chunk before the `data` chunk.
        case missingFormat = "missing_fmt"
        /// No `data` chunk.
        case missingData = "missing_data"
        /// A well-formed format this reader does not decode (e.g. ADPCM, 12-bit PCM).
        case unsupportedFormat = "unsupported_format"
        /// A format chunk with impossible values (zero channels, zero rate, bad block alignment).
        case invalidFormat = "invalid_format"
        /// A chunk or header claims more bytes than the file holds.
        case truncated = "truncated"
        /// Raw PCM bytes whose count is not a whole number of samples.
        case misalignedBytes = "misaligned_bytes"
        /// A sample rate or argument outside what the component supports.
        case invalidArgument = "invalid_argument"
        /// Reading or writing the file failed.
        case io = "io_error"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
