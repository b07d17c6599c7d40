import SherpaOnnxSpeakers
import SpeakerEmbedding
import StreamingDiarization
import VoiceActivity

/// The real models behind the diarizer's two protocols, shared by the speakerkit plugin and the
/// benchmarks so both run exactly the same pipeline.

/// The GE2E encoder as the diarizer's embedder (shared by every session; it is immutable).
public struct GE2EEmbedder: SpeakerEmbedder {
    public let encoder: SpeakerEncoder

    public init(encoder: SpeakerEncoder) {
        self.encoder = encoder
    }

    public var dimension: Int { SpeakerEncoder.embeddingSize }

    public func embed(_ windows: [[Float]]) throws -> [[Float]] {
        try encoder.embed(sampleWindows: windows, sampleRate: SpeakerEncoder.sampleRate)
    }
}

/// Silero VAD (run on onnxruntime, or by sherpa-onnx: `VADConfig.engine`) as the diarizer's speech detector; one per session.
public final class SileroSpeechDetector: SpeechDetector {
    public let detector: SileroVoiceActivityDetector

    public init(detector: SileroVoiceActivityDetector) {
        self.detector = detector
    }

    public func accept(samples: [Float]) { detector.accept(samples: samples) }
    public func popSegments() -> [SpeechSpan] {
        detector.popSegments().map { SpeechSpan(startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
    }
    public var ongoingSpeechStartSeconds: Double? { detector.ongoingSpeechStartSeconds }
    public var analyzedSeconds: Double { detector.analyzedSeconds }
    public func flush() { detector.flush() }
}

/// A sherpa-onnx embedding model (3D-Speaker, WeSpeaker, NeMo) as the diarizer's embedder, in place of
/// GE2E. One extractor serves every session of a process; windows are embedded one by one.
public struct SherpaOnnxEmbedder: SpeakerEmbedder {
    public let extractor: SpeakerEmbeddingExtractor

    public init(extractor: SpeakerEmbeddingExtractor) {
        self.extractor = extractor
    }

    public var dimension: Int { extractor.dimension }

    public func embed(_ windows: [[Float]]) throws -> [[Float]] {
        try windows.map { try extractor.embed($0) }
    }
}
