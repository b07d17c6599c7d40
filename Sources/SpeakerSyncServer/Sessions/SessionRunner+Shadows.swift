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
    /// Why the start's shadow providers cannot run here, checked before anything is claimed.
    func shadowProvidersRefusal(_ request: StartRequest) -> ProtocolError? {
        for shadow in request.shadowProviders {
            if shadow == request.provider {
                return ProtocolError(.invalidField, "start: shadow_providers names the session's own provider \"\(shadow)\"")
            }
            guard let descriptor = environment.providers.provider(id: shadow) else {
                let known = environment.providers.providers.map(\.id).joined(separator: ", ")
                return ProtocolError(.unknownProvider, "unknown shadow provider '\(shadow)'; this server has: \(known)")
            }
            guard case .plugin = descriptor.kind else {
                return ProtocolError(.invalidField, "start: shadow provider \"\(shadow)\" does not diarize on the server (only plugins can shadow)")
            }
            if case .unavailable(let reason, _) = environment.providers.status(of: shadow) {
                return ProtocolError(.providerUnavailable, "shadow provider \(shadow) is unavailable: \(reason)")
            }
        }
        return nil
    }

    /// One instance per shadow provider, continuing its stored labelling (`restored`, read by the
    /// start) when the conversation resumes. Throws the protocol error to fail the start with.
    func startShadows(_ session: inout LiveSession, restored: [String: LabellingRecord]) throws(ProtocolError) {
        for shadow in session.request.shadowProviders {
            var labelling = ShadowLabelling(provider: shadow, merge: environment.merge, restored: restored[shadow], words: session.merger.words)
            do {
                // Its own options (default none) and no known voices: a shadow answers "what would this
                // provider do with this audio", which is the comparison a developer asks for.
                let request = ProviderSessionRequest(providerID: shadow, sessionID: "\(session.sessionToken)-shadow-\(shadow)",
                                                     sampleRate: 16_000, optionsJSON: session.request.shadowOptionsJSON[shadow] ?? "{}")
                labelling.engine = try environment.providers.makeSession(request, queue: queue) { [weak self] event in
                    self?.shadowEvent(shadow, event)
                }
            } catch {
                throw Self.shadowStartFailure(error, provider: shadow)
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

    private static func shadowStartFailure(_ error: any Error, provider: String) -> ProtocolError {
        if let error = error as? PluginError, error.code == .providerUnavailable {
            return ProtocolError(.providerUnavailable, "shadow provider \(provider) is unavailable: \(error.message)")
        }
        // A plugin's own error is the provider's words; anything else stays in the log.
        let detail = (error as? PluginError).map { "\($0)" } ?? "an internal error"
        return ProtocolError(.providerFailed, "shadow provider \(provider) could not start: \(detail)")
    }

    /// The session's audio (16 kHz) to every running shadow. A shadow further behind than the
    /// session's own provider may be is stopped rather than allowed to hold back reading.
    func pushToShadows(_ pcm: [Float]) {
        guard live != nil else { return }
        for index in live!.shadows.indices {
            guard let engine = live!.shadows[index].engine else { continue }
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
        guard live != nil else { return }
        for index in live!.shadows.indices where !live!.shadows[index].finishing {
            guard let engine = live!.shadows[index].engine else { continue }
            live!.shadows[index].finishing = true
            if !tail.isEmpty { engine.push(samples: tail) }
            engine.finalize()
        }
    }

    /// What a shadow's provider reports, on the queue.
    func shadowEvent(_ provider: String, _ event: ProviderEvent) {
        guard live != nil, let index = live!.shadows.firstIndex(where: { $0.provider == provider }) else { return }
        let session = live!
        switch event {
        case .processed(let chunk):
            live!.shadows[index].recordProcessing(chunkWallSeconds: chunk.chunkWallSeconds, cpuSeconds: chunk.cpuSeconds)
            live!.shadows[index].apply(chunk.turns, sessionToken: session.sessionToken, audioOffsetSeconds: session.audioOffsetSeconds,
                                       at: session.nowSeconds)
        case .finalized(let result):
            live!.shadows[index].recordProcessing(cpuSeconds: result.cpuSeconds)
            live!.shadows[index].apply(result.turns, sessionToken: session.sessionToken, audioOffsetSeconds: session.audioOffsetSeconds,
                                       at: session.nowSeconds)
            live!.shadows[index].engine?.close()
            live!.shadows[index].engine = nil
            runAfterAnalysisIfDone()
        case .failed(let error):
            environment.metrics.increment("speakersync_shadow_failures_total", ["provider": provider, "code": error.code.rawValue])
            stopShadow(at: index, reason: "the provider failed: \(error)")
        }
    }

    private func stopShadow(at index: Int, reason: String) {
        logger.warning("shadow provider stopped; the session goes on", metadata: ["shadow": "\(live!.shadows[index].provider)", "reason": "\(reason)"])
        live!.shadows[index].stop(reason: reason)
        runAfterAnalysisIfDone()
    }

    /// The labellings stored when the session ends: its own provider's (the labels the device was
    /// sent) and each shadow's. `interruptedReason`: the session ended without finalize.
    func labellings(interruptedReason: String?) -> [LabellingRecord] {
        guard let session = live else { return [] }
        let audioSeconds = session.audioEndSeconds - session.audioOffsetSeconds
        let stats = session.stats()
        let own = LabellingStats(
            audioSeconds: audioSeconds, wordCount: stats.wordCount, unlabelledWordCount: stats.unlabelledWordCount,
            speakerCount: stats.speakerCount, cpuSeconds: session.processingCPUSeconds, chunkSeconds: stats.chunkProcessingSeconds,
            labelLatenciesSeconds: stats.firstLabelLatenciesSeconds)
        let live = session.merger.labellingRecord(
            name: session.request.provider, provider: session.request.provider, source: .live, isComplete: interruptedReason == nil,
            statusReason: interruptedReason, statsJSON: own.json)
        return [live] + session.shadows.map { $0.record(audioSeconds: audioSeconds, interruptedReason: interruptedReason) }
    }
}
