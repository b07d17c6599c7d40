import OverlapDiarization
import ProviderPluginKit

/// One `pyannote` session: an `OverlapDiarizer` behind the C instance table. Driven from one session
/// queue (the ABI's rule), so no locking inside.
final class PyannoteSession: PluginProviderSession {
    private let diarizer: OverlapDiarizer
    private var outbox = PluginTurnOutbox()
    private var isFinalized = false

    init(diarizer: OverlapDiarizer) {
        self.diarizer = diarizer
    }

    func push(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) {
        guard !isFinalized else { throw PluginFailure(.badState, "push after finalize") }
        do {
            try diarizer.push(Array(samples))
        } catch {
            throw PluginFailure(.internalError, "\(error)")
        }
    }

    func pullTurns() -> [PluginTurn] {
        for turn in diarizer.pullTurns() {
            outbox.publish(PluginTurn(id: turn.id, speaker: turn.speaker, startSeconds: turn.startSeconds, endSeconds: turn.endSeconds,
                                      confidence: turn.confidence, isRemoved: turn.isRemoved))
        }
        return outbox.pull()
    }

    func finalize() throws(PluginFailure) {
        guard !isFinalized else { return }
        isFinalized = true
        do {
            try diarizer.finalize()
        } catch {
            throw PluginFailure(.internalError, "\(error)")
        }
    }

    func profile(of speaker: Int32) -> (embedding: [Float], seconds: Double)? {
        diarizer.profile(of: speaker)
    }
}
