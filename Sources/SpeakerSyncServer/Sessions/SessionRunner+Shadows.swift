import Foundation
import PluginHost
import SessionProtocol
import SpeakerSyncAudio
import SpeakerSyncStore
import TranscriptMerge

/// Shadow providers (`shadow_providers`): more providers on the session's audio, for comparison.
/// The device sees only its own provider; each shadow's labels are stored as a labelling of the
/// same words when the session ends. A shadow can only ever stop itself: its failure, crash or
/// backlog never reaches the session, the device, or the session's provider. All on the queue.
extension SessionRunner {
    /// One instance per shadow provider, continuing its stored labelling (`restored`, read by the
    /// start) when the conversation resumes. Throws the protocol error to fail the start with.
    func startShadows(_ session: LiveSession, restored: [String: LabellingRecord]) throws(ProtocolError) {
        for shadow in session.request.shadowProviders {
            // Its turns sit on the conversation timeline as the session's own provider's do.
            let scope = ProviderInstanceScope(provider: shadow, instance: session.sessionToken, offsetSeconds: session.audioOffsetSeconds)
            var labelling = Labelling(source: .shadow, scope: scope, words: session.labelling.merger.words, restored: restored[shadow],
                                      merge: environment.merge)
            do {
                // Its own options (default none) and no known voices: a shadow answers "what would this
                // provider do with this audio", which is the comparison a developer asks for.
                let request = ProviderSessionRequest(providerID: shadow, sessionID: "\(session.sessionToken)-shadow-\(shadow)",
                                                     sampleRate: 16_000, optionsJSON: session.request.shadowOptionsJSON[shadow] ?? "{}")
                labelling.engine = try environment.providers.makeSession(request, queue: queue) { [weak self] event in
                    self?.shadowEvent(shadow, event)
                }
            } catch {
                throw SessionStarter.shadowStartFailure(error, provider: shadow)
            }
            session.shadows.append(labelling)
        }
        if session.resampler == nil, session.request.sampleRate != 16_000 {
            do {
                session.resampler = try StreamingResampler(inputRate: session.request.sampleRate)
            } catch {
                throw ProtocolError(.internalError, "cannot resample \(session.request.sampleRate) Hz audio for the shadow providers: \(error)")
            }
        }
    }

    /// The session's audio (16 kHz) to every running shadow. A shadow further behind than the
    /// session's own provider may be is stopped rather than allowed to hold back reading.
    func pushToShadows(_ pcm: [Float]) {
        guard let live else { return }
        for index in live.shadows.indices {
            guard let engine = live.shadows[index].engine else { continue }
            if engine.pendingSampleCount > environment.limits.providerBacklogPauseSamples {
                let seconds = engine.pendingSampleCount / 16_000
                stopShadow(at: index, reason: "fell \(seconds) s behind the audio; stopped so the session is not held back")
                continue
            }
            engine.push(samples: pcm)
        }
    }

    /// At finalize or teardown: the resampler's tail, then each running shadow asked for its final turns.
    func finishShadows(tail: [Float]) {
        guard let live else { return }
        for index in live.shadows.indices where !live.shadows[index].finishing {
            guard let engine = live.shadows[index].engine else { continue }
            live.shadows[index].finishing = true
            if !tail.isEmpty { engine.push(samples: tail) }
            engine.finalize()
        }
    }

    /// What a shadow's provider reports, on the queue.
    func shadowEvent(_ provider: String, _ event: ProviderEvent) {
        guard let live, let index = live.shadows.firstIndex(where: { $0.provider == provider }) else { return }
        switch event {
        case .processed(let chunk):
            live.shadows[index].recordProcessing(chunkWallSeconds: chunk.chunkWallSeconds, cpuSeconds: chunk.cpuSeconds)
            let change = live.shadows[index].apply(chunk.turns)
            live.shadows[index].labelled(change.delta, at: live.nowSeconds)
        case .finalized(let result):
            live.shadows[index].recordProcessing(cpuSeconds: result.cpuSeconds)
            let change = live.shadows[index].apply(result.turns)
            live.shadows[index].labelled(change.delta, at: live.nowSeconds)
            live.shadows[index].engine?.close()
            live.shadows[index].engine = nil
            runAfterAnalysisIfDone()
        case .failed(let error):
            environment.metrics.increment("speakersync_shadow_failures_total", ["provider": provider, "code": error.code.rawValue])
            stopShadow(at: index, reason: "the provider failed: \(error)")
        }
    }

    private func stopShadow(at index: Int, reason: String) {
        guard let live else { return }
        logger.warning("shadow provider stopped; the session goes on", metadata: ["shadow": "\(live.shadows[index].provider)", "reason": "\(reason)"])
        live.shadows[index].stop(reason: reason)
        runAfterAnalysisIfDone()
    }

    /// The labellings stored when the session ends: its own provider's (the labels the device was
    /// sent) and each shadow's. `interruptedReason`: the session ended without finalize.
    func labellings(interruptedReason: String?) -> [LabellingRecord] {
        guard let live else { return [] }
        let audioSeconds = live.sessionAudioSeconds
        // The session's own counts its active speakers (merged ones not), as the device's `stats` does.
        let own = live.labelling.record(audioSeconds: audioSeconds, interruptedReason: interruptedReason,
                                        speakerCount: live.labelling.speakers.activeSpeakers.count)
        return [own] + live.shadows.map { $0.record(audioSeconds: audioSeconds, interruptedReason: interruptedReason) }
    }
}
