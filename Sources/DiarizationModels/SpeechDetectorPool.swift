import Foundation
import Logging
import Synchronization
import VoiceActivity

/// Silero VAD detectors for a provider's sessions, kept for reuse: creating one builds an onnxruntime
/// session, the dearest part of starting a session (a hundred sessions starting together took 1.1 s
/// each in process), so a finished session's detector is reset and given to the next.
/// `SileroVoiceActivityDetectorTests.resetStartsANewTimeline` shows a reset detector gives a new one's
/// segments. Any thread.
public final class SpeechDetectorPool: Sendable {
    public let config: VADConfig
    private let logger: Logger
    private let idle = Mutex<[SileroVoiceActivityDetector]>([])
    /// About 5 MB each: enough for a burst of sessions, not a hoard.
    public static let maximumIdle = 64

    /// Loads the VAD library and model once now, so a missing vendor/ fails the plugin's load, not a session.
    public init(config: VADConfig = .default, logger: Logger) throws {
        self.config = config
        self.logger = logger
        giveBack(try SileroVoiceActivityDetector(config: config, logger: logger))
    }

    /// A reset detector from the pool, else a new one.
    public func take() throws -> SileroVoiceActivityDetector {
        if let detector = idle.withLock({ $0.popLast() }) { return detector }
        return try SileroVoiceActivityDetector(config: config, logger: logger)
    }

    /// A finished session's detector, kept (at most `maximumIdle`).
    public func giveBack(_ detector: SileroVoiceActivityDetector) {
        detector.reset()
        idle.withLock { idle in
            if idle.count < Self.maximumIdle { idle.append(detector) }
        }
    }

    /// The speech in a recording, the VAD's regions joined (for enrolment: pauses would dilute a voice).
    public func speech(in samples: UnsafeBufferPointer<Float>) throws -> [Float] {
        let audio = Array(samples)
        let detector = try take()
        defer { giveBack(detector) }
        detector.accept(samples: audio)
        detector.flush()
        var speech: [Float] = []
        for segment in detector.popSegments() {
            let lower = max(0, Int(segment.startSeconds * Double(config.sampleRate)))
            let upper = min(audio.count, Int(segment.endSeconds * Double(config.sampleRate)))
            if upper > lower { speech += audio[lower ..< upper] }
        }
        return speech
    }
}

extension SpeechDetectorPool {
    /// The speech of an enrolment recording, refusing less than `minimumSeconds` of it (a voice
    /// embedding from less tells people apart poorly; 3 to 10 s works best).
    public func enrolmentSpeech(in samples: UnsafeBufferPointer<Float>, minimumSeconds: Double = 1.0) throws(EnrolmentSpeechError) -> [Float] {
        let speech: [Float]
        do {
            speech = try self.speech(in: samples)
        } catch {
            throw EnrolmentSpeechError(isTooShort: false, message: "\(error)")
        }
        let seconds = Double(speech.count) / Double(config.sampleRate)
        guard seconds >= minimumSeconds else {
            throw EnrolmentSpeechError(isTooShort: true, message: String(format: "%.1f s of speech found; at least %.0f s is needed (3 to 10 s works best)", seconds, minimumSeconds))
        }
        return speech
    }
}

public struct EnrolmentSpeechError: Error, Sendable {
    /// The recording has too little speech (the caller's mistake), rather than the VAD failing.
    public var isTooShort: Bool
    public var message: String
}
