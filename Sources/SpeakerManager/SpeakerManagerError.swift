/// A rejected input or state; `code` is stable, `message` says what was wrong and is not meant to be parsed.
///
/// Nothing is changed when an operation throws: every operation validates all of its input first.
public struct SpeakerManagerError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A `SpeakerManagerConfig` field is out of range.
        case invalidConfig = "invalid_config"
        /// An embedding's length is not the configured `embeddingDimension`.
        case dimensionMismatch = "dimension_mismatch"
        /// An embedding holds NaN or an infinity.
        case nonFiniteEmbedding = "non_finite_embedding"
        /// An embedding is all zeros, so it has no direction and no cosine distance.
        case zeroNormEmbedding = "zero_norm_embedding"
        /// A speech duration is negative or not finite.
        case invalidDuration = "invalid_duration"
        /// A confidence is outside 0...1 or not finite.
        case invalidConfidence = "invalid_confidence"
        /// A threshold override is not a cosine distance in 0...2.
        case invalidThreshold = "invalid_threshold"
        /// A speaker id is empty.
        case invalidSpeakerID = "invalid_speaker_id"
        /// A speaker record has an impossible field (negative count, non-finite duration or confidence sum).
        case invalidSpeakerRecord = "invalid_speaker_record"
        /// A snapshot cannot be restored (unknown format version, other dimension, duplicate ids).
        case invalidSnapshot = "invalid_snapshot"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
