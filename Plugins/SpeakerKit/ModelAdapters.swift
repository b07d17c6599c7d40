import SpeakerEmbedding
import StreamingDiarization
import VoiceActivity

/// The GE2E encoder as the diarizer's embedder (shared by every session; it is immutable).
struct GE2EEmbedder: SpeakerEmbedder {
    let encoder: SpeakerEncoder
    var dimension: Int { SpeakerEncoder.embeddingSize }

    func embed(_ windows: [[Float]]) throws -> [[Float]] {
        try encoder.embed(sampleWindows: windows, sampleRate: SpeakerEncoder.sampleRate)
    }
}

/// Silero VAD (sherpa-onnx) as the diarizer's speech detector; one per session.
final class SileroSpeechDetector: SpeechDetector {
    let detector: SileroVoiceActivityDetector

    init(detector: SileroVoiceActivityDetector) {
        self.detector = detector
    }

    func accept(samples: [Float]) { detector.accept(samples: samples) }
    func popSegments() -> [SpeechSpan] {
        detector.popSegments().map { SpeechSpan(startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
    }
    var ongoingSpeechStartSeconds: Double? { detector.ongoingSpeechStartSeconds }
    var analyzedSeconds: Double { detector.analyzedSeconds }
    func flush() { detector.flush() }
}
