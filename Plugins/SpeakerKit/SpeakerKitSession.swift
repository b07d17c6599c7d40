import CSpeakerSyncPluginABI
import DiarizationModels
import Foundation
import Logging
import SpeakerManager
import StreamingDiarization
import VoiceActivity

/// One speakerkit instance: a `StreamingDiarizer` behind the C instance table. Driven from one
/// session queue (the ABI's rule), so no locking inside.
final class SpeakerKitSession {
    let diarizer: StreamingDiarizer
    let sessionID: String
    /// Given back to the runtime's pool when the session ends.
    private let detector: SileroVoiceActivityDetector
    private let runtime: SpeakerKitRuntime
    let logger: Logger
    private var finalized = false
    private var pending: [DiarizerTurn] = []
    /// last_error's text: plugin-owned, valid until the next call on the instance.
    let lastError = UnsafeMutablePointer<CChar>.allocate(capacity: 512)

    init(runtime: SpeakerKitRuntime, options: SpeakerKitOptions, known: [Speaker], sessionID: String) throws {
        self.sessionID = sessionID
        var logger = runtime.logger
        logger[metadataKey: "session"] = "\(sessionID)"
        self.logger = logger
        let speakers = try SpeakerManager(config: options.config.speakerManagerConfig, logger: logger)
        if !known.isEmpty { try speakers.initializeKnownSpeakers(known, mode: .overwrite, preserveIfPermanent: false) }
        self.runtime = runtime
        detector = try runtime.takeDetector()
        diarizer = StreamingDiarizer(
            config: options.config, hint: options.hint, detector: SileroSpeechDetector(detector: detector),
            embedder: GE2EEmbedder(encoder: runtime.encoder), speakers: speakers, logger: logger)
        lastError.initialize(to: 0)
    }

    deinit {
        runtime.giveBack(detector)
        lastError.deallocate()
    }

    func setError(_ message: String) {
        let bytes = Array(message.utf8.prefix(511))
        for (index, byte) in bytes.enumerated() { lastError[index] = CChar(bitPattern: byte) }
        lastError[bytes.count] = 0
    }

    func clearError() { lastError[0] = 0 }

    func push(_ samples: UnsafeBufferPointer<Float>) -> speakersync_status_t {
        clearError()
        guard !finalized else {
            setError("push_audio after finalize")
            return SPEAKERSYNC_ERR_BAD_STATE
        }
        if let bad = samples.firstIndex(where: { !$0.isFinite }) {
            setError("push_audio: sample \(bad) is not finite")
            return SPEAKERSYNC_ERR_INVALID_ARGUMENT
        }
        do {
            try diarizer.push(Array(samples))
            pending += diarizer.pullTurns()
            return SPEAKERSYNC_OK
        } catch {
            setError("\(error)")
            return SPEAKERSYNC_ERR_INTERNAL
        }
    }

    func finalize() -> speakersync_status_t {
        clearError()
        guard !finalized else {
            setError("finalize called twice")
            return SPEAKERSYNC_ERR_BAD_STATE
        }
        finalized = true
        do {
            try diarizer.finalize()
            pending += diarizer.pullTurns()
            logger.debug("finalized", metadata: [
                "speakers": "\(diarizer.speakersWithTurns.count)", "embedded_frames": "\(diarizer.embeddedFrameCount)",
            ])
            return SPEAKERSYNC_OK
        } catch {
            setError("\(error)")
            return SPEAKERSYNC_ERR_INTERNAL
        }
    }

    func pull(into out: UnsafeMutablePointer<speakersync_turn_t>?, capacity: Int, written: UnsafeMutablePointer<Int>) -> speakersync_status_t {
        clearError()
        let count = min(capacity, pending.count)
        if count > 0, let out {
            for index in 0 ..< count {
                let turn = pending[index]
                out[index] = speakersync_turn_t(
                    turn_id: turn.id, speaker: turn.speaker, start_seconds: turn.startSeconds, end_seconds: turn.endSeconds,
                    confidence: turn.confidence, flags: turn.isRemoved ? SPEAKERSYNC_TURN_REMOVED : 0)
            }
            pending.removeFirst(count)
        }
        written.pointee = count
        return SPEAKERSYNC_OK
    }

    func profile(speaker: Int32, out: UnsafeMutablePointer<Float>?, capacity: Int,
                 dimension: UnsafeMutablePointer<Int>?, duration: UnsafeMutablePointer<Double>?) -> speakersync_status_t {
        clearError()
        guard let (embedding, seconds) = diarizer.profile(of: speaker) else {
            setError("no speaker \(speaker) in this session")
            return SPEAKERSYNC_ERR_INVALID_ARGUMENT
        }
        guard let out, capacity >= embedding.count else {
            setError("profile needs \(embedding.count) floats, got room for \(capacity)")
            return SPEAKERSYNC_ERR_INVALID_ARGUMENT
        }
        for (index, value) in embedding.enumerated() { out[index] = value }
        dimension?.pointee = embedding.count
        duration?.pointee = seconds
        return SPEAKERSYNC_OK
    }
}
