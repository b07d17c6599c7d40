import Dispatch
import Foundation
import PluginHost
import SessionProtocol
import SpeakerSyncStore
import SpeechRecognition
import TranscriptMerge

/// The session's audio, words and turns: audio to the provider (and shadows, and the recogniser),
/// the provider's turns and the device's segments mapped onto session labels, words merged and
/// labelled, and the device's speaker edits. Every change is committed, then sent (+Delivery). All
/// on the queue.
extension SessionRunner {

    /// Keeps each speaker's voice profile from this session's provider, so a reconnect (or "save as
    /// person") finds them. Called with the provider's final result, which carries the profiles; a
    /// failed write is retried by the store writer like every step.
    func saveVoiceProfiles(_ profiles: [Int32: SpeakerProfile]) {
        guard let live, !profiles.isEmpty else { return }
        var best: [String: SpeakerProfileRecord] = [:]
        for (speaker, label) in live.labelling.resolvedInstanceSpeakers {
            guard let profile = profiles[speaker] else { continue }
            if best[label].map({ $0.speechSeconds < profile.durationSeconds }) ?? true {
                best[label] = SpeakerProfileRecord(label: label, embedding: profile.embedding, speechSeconds: profile.durationSeconds)
            }
        }
        // Through the store writer with the session's other writes: a session thread never waits for
        // PostgreSQL (a hundred sessions finalizing at once used to queue on one connection here).
        var step = PersistStep()
        step.speakerProfiles = best.values.sorted { $0.label < $1.label }.map { (live.labelling.provider, $0) }
        persist(step, delivery: .firstOutcome) { _ in }
    }

    func audio(_ samples: [Float]) {
        guard let live, !live.finalized else { return }
        live.inputSampleCount += samples.count
        if let chunks = live.audioChunker?.append(samples), !chunks.isEmpty, admitStoredAudio(chunks) {
            // Stored in the session's step order, after the conversation row; a failure shows as
            // stored:false on the words like any other store failure.
            var step = PersistStep()
            step.audioChunks = chunks
            persist(step) { _ in }
        }
        let now = live.nowSeconds
        live.labelling.labelLatency.audioArrived(upTo: live.audioEndSeconds, at: now)
        for index in live.shadows.indices {
            live.shadows[index].labelLatency.audioArrived(upTo: live.audioEndSeconds, at: now)
        }
        if let recognizer = live.recognizer {
            recognizer.push(samples)
            if live.labelling.engine == nil { pauseReceivingIfProviderBehind() }
        }
        guard live.labelling.engine != nil || live.shadows.contains(where: \.isRunning) else { return }
        let pcm = live.resampler?.process(samples) ?? samples
        // The session's own provider first: with --provider-isolation none a push runs the provider
        // inside the call, and the shadows must not delay the device's labels.
        if let engine = live.labelling.engine {
            // Even an empty push goes out: the chunk's processing time is recorded when it comes back.
            engine.push(samples: pcm)
        }
        pushToShadows(pcm)
        if self.live?.labelling.engine != nil { pauseReceivingIfProviderBehind() }
    }

    /// An Opus packet: decoded at the session's rate and then handled exactly like PCM. A packet
    /// libopus refuses despite valid framing is replaced by silence of its length (the state machine
    /// has already counted its samples, and words after it must keep their place on the timeline).
    func encodedAudio(_ packet: [UInt8], sampleCount: Int) {
        guard let decoder = live?.opusDecoder else { return }
        var samples: [Float]
        do {
            samples = try decoder.decode(packet)
        } catch {
            logger.warning("undecodable Opus packet replaced by silence", metadata: ["bytes": "\(packet.count)", "error": "\(error)"])
            samples = []
        }
        if samples.count != sampleCount {
            samples = Array(samples.prefix(sampleCount)) + [Float](repeating: 0, count: max(0, sampleCount - samples.count))
        }
        audio(samples)
    }

    /// What the provider reports, on the queue: turns for a chunk, the final turns, or its failure.
    func providerEvent(_ event: ProviderEvent) {
        guard let live else { return }
        switch event {
        case .processed(let chunk):
            // Wall time from handing the chunk over to its turns (what the device waits for); CPU is the provider's.
            live.labelling.recordProcessing(chunkWallSeconds: chunk.chunkWallSeconds, cpuSeconds: chunk.cpuSeconds)
            for seconds in chunk.chunkWallSeconds {
                environment.metrics.observe("speakersync_provider_chunk_seconds", ["provider": live.request.provider], seconds)
            }
            applyProviderTurns(chunk.turns)
            // The periodic snapshot: stored now, so a resume after a crash knows these voices.
            saveVoiceProfiles(chunk.profiles)
            resumeReceivingIfDrained()
        case .finalized(let result):
            live.labelling.recordProcessing(cpuSeconds: result.cpuSeconds)
            applyProviderTurns(result.turns)
            saveVoiceProfiles(result.profiles)
            live.labelling.engine?.close()
            live.labelling.engine = nil
            runAfterAnalysisIfDone()
        case .failed(let error):
            providerFailed(error)
        }
    }

    func words(_ message: WordsMessage) {
        guard let live else { return }
        environment.metrics.increment("speakersync_words_received_total", by: Double(message.words.count))
        let limit = environment.limits.maxConversationWords
        let merger = live.labelling.merger
        let replaced = merger.wordCount(ofResult: message.resultID)
        if limit > 0, message.words.count > replaced, merger.wordCount - replaced + message.words.count > limit {
            run(machine.failed(ProtocolError(.tooManyWords,
                "words: the conversation holds its limit of \(limit) words; result '\(message.resultID)' was not stored (start a new conversation)")))
            return
        }
        mergeWords(message)
    }

    /// What the session's speech recogniser reports (asr "server"), on the queue.
    func recognizerEvent(_ event: RecognizerEvent) {
        guard let live else { return }
        switch event {
        case .processed(let utterances):
            serverWords(utterances)
            resumeReceivingIfDrained()
        case .finished(let utterances, let cpuSeconds):
            serverWords(utterances)
            live.recognizer = nil
            live.recognizerCPUSeconds = cpuSeconds
            runAfterAnalysisIfDone()
        }
    }

    /// Each decoded utterance becomes one final ASR result, merged exactly as a device's `words`
    /// message: result id `asr:<session token>:<n>` (unique in the conversation across resumes, as a
    /// device's result ids are), the recogniser's confidences, the same labelling, storing and updates.
    func serverWords(_ utterances: [RecognizedUtterance]) {
        for utterance in utterances {
            if let failure = utterance.failure {
                logger.warning("speech recogniser failed on an utterance; its words are lost", metadata: [
                    "start_seconds": "\(utterance.startSeconds)", "end_seconds": "\(utterance.endSeconds)", "error": "\(failure)",
                ])
                environment.metrics.increment("speakersync_asr_failures_total", ["code": failure.code.rawValue])
            }
            guard !utterance.words.isEmpty, let live else { continue }
            environment.metrics.increment("speakersync_asr_words_total", by: Double(utterance.words.count))
            mergeWords(WordsMessage(resultID: "asr:\(live.sessionToken):\(utterance.index)", isFinal: true,
                                    words: utterance.words.map(\.word)))
        }
    }

    /// Words of the device's ASR or the server's: labelled by the merge, stored, sent as updates.
    func mergeWords(_ message: WordsMessage) {
        guard let live else { return }
        let arrived = message.words.indices.map { (id: WordID(message.resultID, $0), endSeconds: message.words[$0].endSeconds) }
        let now = live.nowSeconds
        let result = (message.resultID, message.words, message.isFinal)
        // The session's own labels are timed when the update is sent (+Delivery); the shadows', now.
        let delta = live.labelling.upsertResult(result, arrived: arrived, at: now)
        for index in live.shadows.indices {
            let shadowDelta = live.shadows[index].upsertResult(result, arrived: arrived, at: now)
            live.shadows[index].labelled(shadowDelta, at: now)
        }
        commit(delta)
    }

    func deviceSegments(_ segments: [DeviceSegment]) {
        guard let live else { return }
        guard live.request.provider == ProviderDescriptor.deviceID else {
            run(machine.failed(ProtocolError(.invalidField, "segments are accepted only in sessions with provider 'device' (this one uses '\(live.request.provider)')")))
            return
        }
        var step = PersistStep()
        var turns: [SpeakerTurn] = []
        for segment in segments {
            let (label, created) = live.labelling.speakers.label(provider: ProviderDescriptor.deviceID, key: segment.speaker,
                                                                 heardAtSeconds: segment.startSeconds)
            if let created {
                step.speakers.append(created)
                step.keyLabels["\(ProviderDescriptor.deviceID)/\(segment.speaker)"] = created.label
            }
            // A segment re-sent with the same start and speaker replaces the earlier one (it grew).
            let id = "device:\(Int((segment.startSeconds * 1000).rounded())):\(segment.speaker)"
            turns.append(SpeakerTurn(id: id, speaker: label, startSeconds: segment.startSeconds, endSeconds: segment.endSeconds, confidence: segment.confidence))
        }
        step.upsertedTurns = turns.map { (ProviderDescriptor.deviceID, $0) }
        live.liveTurns.published(turns)
        let delta = live.labelling.upsertTurns(turns, provider: ProviderDescriptor.deviceID)
        commit(delta, step: step)
    }

    /// The provider's turns, mapped onto session labels and the conversation timeline and merged
    /// (`Labelling.apply`), then stored and sent.
    func applyProviderTurns(_ providerTurns: [ProviderTurn]) {
        guard !providerTurns.isEmpty, let live else { return }
        let provider = live.labelling.provider
        let change = live.labelling.apply(providerTurns)
        var step = PersistStep()
        step.speakers = change.speakers
        step.keyLabels = change.keyLabels
        step.upsertedTurns = change.upsertedTurns.map { (provider, $0) }
        step.removedTurns = change.removedTurnIDs.map { (provider, $0) }
        if !change.upsertedTurns.isEmpty { live.liveTurns.published(change.upsertedTurns) }
        commit(change.delta, step: step)
    }

    func rename(_ label: String, to name: String) {
        guard let live else { return }
        do {
            let speaker = try live.labelling.speakers.rename(label, to: name)
            var step = PersistStep()
            step.speakers = [speaker]
            let affected = live.labelling.merger.utterances.filter { $0.speaker == speaker.label }
            persist(step) { [self] stored in
                guard let live = self.live else { return }
                run(machine.send(.speakers(wireSpeakers(live.labelling.speakers))))
                sendUtterances(affected, removed: [], stored: stored, isFinal: false)
            }
        } catch {
            run(machine.failed(ProtocolError(.unknownSpeaker, error.message)))
        }
    }

    func merge(_ from: String, into: String) {
        guard let live else { return }
        do {
            let (source, target) = try live.labelling.speakers.merge(from, into: into)
            var step = PersistStep()
            step.speakers = [source, target].compactMap { live.labelling.speakers.speaker($0) }
            let delta = live.labelling.merger.mergeSpeaker(source, into: target)
            let labelling = live.labelling
            step.upsertedTurns = labelling.merger.turns.filter { $0.speaker == target }.map { (labelling.provider(ofTurn: $0.id), $0) }
            commit(delta, step: step, announceSpeakers: true)
        } catch {
            run(machine.failed(ProtocolError(error.code == .unknownSpeaker ? .unknownSpeaker : .invalidField, error.message)))
        }
    }
}

extension SessionRunner {
    var audioAdmission: StoredAudioAdmission {
        StoredAudioAdmission(quotaSecondsPerDevice: environment.limits.storedAudioQuotaSecondsPerDevice,
                             minimumFreeDiskBytes: environment.limits.minimumFreeDiskBytes)
    }

    func freeDiskBytes() -> Int64? {
        environment.dataDirectory.flatMap { StoredAudioAdmission.freeDiskBytes(at: $0) }
    }

    /// Chunks about to be stored: within the device's quota and above the disk's watermark, or the
    /// session stops storing audio (told once, `audio_not_stored`) and goes on.
    func admitStoredAudio(_ chunks: [AudioChunkRecord]) -> Bool {
        let seconds = chunks.reduce(0.0) { $0 + Double($1.samples.count) / Double($1.sampleRate) }
        var reason: String?
        guard let live else { return false }
        if let remaining = live.audioQuotaRemainingSeconds {
            if seconds > remaining { reason = audioAdmission.quotaReason } else { live.audioQuotaRemainingSeconds = remaining - seconds }
        }
        guard let reason = reason ?? audioAdmission.diskRefusal(freeDiskBytes: freeDiskBytes()) else { return true }
        logger.warning("store_audio stopped", metadata: ["reason": "\(reason)"])
        live.audioChunker = nil
        run(machine.failed(ProtocolError(.audioNotStored, reason)))
        return false
    }
}
