/// Errors from loading the GE2E weights and from embedding audio, with stable codes.
public struct SpeakerEmbeddingError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, Codable {
        /// No ge2e.bin at the configured path, or none found by the default search; the message lists where it looked.
        case modelNotFound = "model_not_found"
        /// The file exists but could not be read.
        case modelUnreadable = "model_unreadable"
        /// The file does not start with "GE2E": not a converted model.
        case badMagic = "bad_magic"
        /// A format version this build does not read.
        case unsupportedVersion = "unsupported_version"
        /// The file ends before its header, a tensor entry or a tensor's data does.
        case truncated = "truncated"
        /// The data region's CRC-32 differs from the header's: the file was damaged after conversion.
        case checksumMismatch = "checksum_mismatch"
        /// The header contradicts itself (unaligned or overlapping offsets, an absurd tensor count, a bad name).
        case malformedHeader = "malformed_header"
        /// A tensor the network needs is absent.
        case missingTensor = "missing_tensor"
        /// A tensor has a shape the network cannot use.
        case wrongShape = "wrong_shape"
        /// A `SpeakerEmbeddingConfig` value outside what resemblyzer's partial windowing allows.
        case invalidConfig = "invalid_config"
        /// Audio at a rate other than the 16 kHz the weights were trained on.
        case unsupportedSampleRate = "unsupported_sample_rate"
        /// A window too short for one frame, a mel window of the wrong width, or non-finite input.
        case invalidInput = "invalid_input"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
