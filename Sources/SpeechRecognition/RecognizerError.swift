/// A failure of the speech recogniser, with a stable `code` for machines (tests, CLI exit messages)
/// and a `message` for people that says what was wrong.
public struct RecognizerError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// The model directory, or one of the files PocketSphinx needs inside it, does not exist.
        case modelNotFound = "model_not_found"
        /// PocketSphinx rejected the configuration arguments.
        case invalidConfig = "invalid_config"
        /// `ps_init` failed although the model files exist (corrupt or mismatched model).
        case decoderInitFailed = "decoder_init_failed"
        /// No samples to recognise.
        case emptyAudio = "empty_audio"
        /// A sample rate the resampler cannot bring to the model's 16 kHz.
        case unsupportedSampleRate = "unsupported_sample_rate"
        /// Samples that are NaN or infinite.
        case invalidSamples = "invalid_samples"
        /// Starting, feeding or ending an utterance failed inside PocketSphinx.
        case decodeFailed = "decode_failed"
        /// Writing a words file failed.
        case io = "io_error"
        /// `StreamingRecognizer.process` or `finish` after the stream was finished.
        case streamFinished = "stream_finished"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
