/// Owns one sherpa-onnx detector: created in init, destroyed in deinit. Keeps its library loaded.
/// Not thread-safe; `SileroVoiceActivityDetector` serialises every call.
final class VoiceActivityDetectorHandle {
    let library: SherpaOnnxLibrary
    private let detector: OpaquePointer

    init(library: SherpaOnnxLibrary, config: VADConfig) throws(VoiceActivityError) {
        // sherpa-onnx's ring buffer must hold the longest segment plus the silence that closes it;
        // it grows itself if not, but with a warning on stderr.
        let bufferSeconds = Float(max(60, 2 * (config.maxSpeechDurationSeconds + config.minSilenceDurationSeconds)))
        self.library = library
        self.detector = try library.createDetector(config, bufferSeconds: bufferSeconds)
    }

    deinit {
        library.destroyDetector(detector)
    }

    func accept(_ window: UnsafeBufferPointer<Float>) { library.acceptWaveform(detector, window) }
    var isSpeechDetected: Bool { library.isSpeechDetected(detector) }
    func popSegments() -> [(startSample: Int64, sampleCount: Int)] { library.popSegments(detector) }
    func flush() { library.flush(detector) }
    func reset() { library.reset(detector) }
}
