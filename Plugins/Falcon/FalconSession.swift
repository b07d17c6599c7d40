import DiarizationModels
import Foundation
import Logging
import PicovoiceFalcon
import ProviderPluginKit
import StreamingDiarization

/// One `falcon` session: the audio kept in a `SessionAudioStore`; every `stepSeconds` of new audio the
/// latest `windowSeconds` are diarized by a borrowed engine and `WindowedTurnTracker` turns the result
/// into revisions of the turns (labels kept by overlap); at finalize the whole session is diarized once
/// and replaces every turn. A live window that fails fails the session (with Picovoice's message); a
/// final pass that fails leaves the live turns standing, so no word loses its speaker.
///
/// Called on the session's queue only (the ABI's rule).
final class FalconSession: PluginProviderSession {
    private let options: FalconOptions
    private let engines: FalconEnginePool
    private let logger: Logger
    private let audio = SessionAudioStore()
    private var tracker = WindowedTurnTracker()
    private var outbox = PluginTurnOutbox()
    private var nextWindowSample: Int
    private var isFinalized = false
    private static let sampleRate = 16_000

    init(options: FalconOptions, engines: FalconEnginePool, logger: Logger) {
        self.options = options
        self.engines = engines
        self.logger = logger
        nextWindowSample = Int(options.stepSeconds * Double(Self.sampleRate))
    }

    func push(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) {
        guard !isFinalized else { throw PluginFailure(.badState, "push after finalize") }
        do {
            try audio.append(samples)
        } catch {
            throw PluginFailure(.internalError, "\(error)")
        }
        guard options.isLive, audio.sampleCount >= nextWindowSample else { return }
        let end = audio.sampleCount
        let start = max(0, end - Int(options.windowSeconds * Double(Self.sampleRate)))
        nextWindowSample = end + Int(options.stepSeconds * Double(Self.sampleRate))
        let segments: [FalconSegment]
        do {
            segments = try diarize(start ..< end)
        } catch {
            throw PluginFailure(error.code.isActivation ? .unavailable : .internalError, "Falcon failed on the live window: \(error.description)")
        }
        let offset = Double(start) / Double(Self.sampleRate)
        apply(tracker.apply(windowStartSeconds: offset, windowEndSeconds: Double(end) / Double(Self.sampleRate),
                            segments: segments.map { .init(tag: $0.speakerTag, startSeconds: offset + $0.startSeconds, endSeconds: offset + $0.endSeconds) }))
    }

    func pullTurns() -> [PluginTurn] {
        outbox.pull()
    }

    func finalize() throws(PluginFailure) {
        guard !isFinalized else { return }
        isFinalized = true
        guard audio.sampleCount > 0 else { return }
        let segments: [FalconSegment]
        do {
            segments = try diarize(0 ..< audio.sampleCount)
        } catch {
            if tracker.turns.isEmpty {
                throw PluginFailure(error.code.isActivation ? .unavailable : .internalError, "Falcon failed on the session's audio: \(error.description)")
            }
            logger.warning("Falcon's pass over the whole session failed; the live turns stand", metadata: ["error": "\(error.description)"])
            return
        }
        guard !segments.isEmpty || tracker.turns.isEmpty else {
            logger.warning("Falcon's final pass found no speech where the live windows found some; the live turns stand")
            return
        }
        apply(tracker.replaceAll(with: segments.map { .init(tag: $0.speakerTag, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }))
    }

    private func diarize(_ range: Range<Int>) throws(FalconError) -> [FalconSegment] {
        do {
            return try audio.withSamples { all in
                try engines.process(UnsafeBufferPointer(rebasing: all[range]))
            }
        } catch let error as FalconError {
            throw error
        } catch {
            throw FalconError(.ioError, "the session's audio could not be read: \(error)")
        }
    }

    private func apply(_ changes: [WindowedTurnTracker.Change]) {
        for change in changes {
            switch change {
            case .upsert(let turn):
                // Falcon gives no per-segment confidence.
                outbox.publish(PluginTurn(id: turn.id, speaker: Int32(clamping: turn.speaker), startSeconds: turn.startSeconds,
                                          endSeconds: turn.endSeconds, confidence: 0.8))
            case .remove(let id):
                outbox.withdraw(id)
            }
        }
    }
}
