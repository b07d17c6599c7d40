import SpeakerSyncStore
import Dispatch
import Foundation
import Logging
import PluginHost
import SessionProtocol
import SpeakerSyncAudio
import Synchronization
import TranscriptMerge
import WebSocketTransport

/// What every session of a server shares.
struct SessionEnvironment: Sendable {
    var transport: any SessionTransport
    var store: any SessionStore
    var plugins: PluginRegistry
    var claims: ConversationClaims
    var merge: MergeConfig
    var protocolConfig: SessionConfig
    var serverVersion: String
    var logger: Logger
    /// Audio queued for a session beyond this pauses reading from its socket until it drains.
    var backlogPauseBytes: Int = 8 << 20
    var backlogResumeBytes: Int = 2 << 20
}

/// One WebSocket session: feeds the pure `SessionStateMachine` and carries out its actions.
///
/// Threading: the lws service thread calls `opened`, `received`, `rejected` and `closed`, which only
/// enqueue onto `queue`. Everything else — the state machine, the provider instance, the merger, the
/// speaker registry — is confined to `queue`, a serial queue per session, which is why the class can
/// be `@unchecked Sendable`. Store completions come back onto `queue` too, so updates go out in the
/// order the steps were made.
final class SessionRunner: @unchecked Sendable {
    let connection: ConnectionID
    private let environment: SessionEnvironment
    private let queue: DispatchQueue
    private var logger: Logger

    // Confined to `queue`.
    private var machine: SessionStateMachine
    private var live: LiveSession?
    private var released = false
    private var tearingDown = false
    private var releaseWaiters: [@Sendable () -> Void] = []
    private var idleTimer: (any DispatchSourceTimer)?
    private let encoder = ServerMessageEncoder()

    // Shared with the service thread.
    private let backlogBytes = Atomic<Int>(0)
    private let receivingPaused = Atomic<Bool>(false)

    init(connection: ConnectionID, environment: SessionEnvironment) {
        self.connection = connection
        self.environment = environment
        self.queue = DispatchQueue(label: "speakersync.session.\(connection.rawValue)")
        self.machine = SessionStateMachine(config: environment.protocolConfig)
        var logger = environment.logger
        logger[metadataKey: "connection"] = "\(connection.rawValue)"
        self.logger = logger
    }

    // MARK: Inputs (service thread)

    func opened(_ request: UpgradeRequest) {
        queue.async { self.run(self.machine.opened(query: request.query)) }
        startIdleTimer()
    }

    /// Ticks the state machine's idle check every `idleIntervalSeconds`; a session that sent nothing
    /// (not even a keepalive) for a whole interval is closed with `idle_timeout` (4000) and stays resumable.
    private func startIdleTimer() {
        let interval = environment.protocolConfig.idleIntervalSeconds
        guard interval > 0 else { return }
        queue.async {
            let timer = DispatchSource.makeTimerSource(queue: self.queue)
            timer.schedule(deadline: .now() + interval, repeating: interval)
            timer.setEventHandler { [weak self] in
                guard let self else { return }
                if self.machine.state == .closed {
                    self.idleTimer?.cancel()
                    self.idleTimer = nil
                    return
                }
                self.run(self.machine.idleTimeout())
            }
            self.idleTimer = timer
            timer.resume()
        }
    }

    func received(_ message: WebSocketMessage) {
        switch message {
        case .text(let text):
            queue.async { self.run(self.machine.receivedText(text)) }
        case .binary(let bytes):
            let backlog = backlogBytes.add(bytes.count, ordering: .relaxed).newValue
            if backlog > environment.backlogPauseBytes, !receivingPaused.exchange(true, ordering: .relaxed) {
                environment.transport.setReceivingPaused(true, for: connection)
            }
            queue.async {
                self.run(self.machine.receivedBinary(bytes))
                let remaining = self.backlogBytes.subtract(bytes.count, ordering: .relaxed).newValue
                if remaining < self.environment.backlogResumeBytes, self.receivingPaused.exchange(false, ordering: .relaxed) {
                    self.environment.transport.setReceivingPaused(false, for: self.connection)
                }
            }
        }
    }

    func rejected(byteCount: Int) {
        queue.async { self.run(self.machine.receivedTooLarge(byteCount: byteCount)) }
    }

    func closed() {
        queue.async {
            self.idleTimer?.cancel()
            self.idleTimer = nil
            self.run(self.machine.peerClosed())
        }
    }

    /// Another session takes this conversation over: stop, flush, and return once stored.
    /// Called from the new session's queue; blocks it until this session's writes are committed.
    func handOver() {
        let done = DispatchSemaphore(value: 0)
        queue.async {
            // A fatal error after start makes the state machine emit `.teardown`, which stores what
            // this session has; the new session proceeds once that is committed.
            self.run(self.machine.failed(ProtocolError(.invalidConversationID, "this conversation was resumed on another connection")))
            self.whenReleased { done.signal() }
        }
        _ = done.wait(timeout: .now() + 30)
    }

    // MARK: Actions (queue)

    private func run(_ actions: [SessionAction]) {
        for action in actions { perform(action) }
    }

    private func perform(_ action: SessionAction) {
        switch action {
        case .begin(let request):
            begin(request)
        case .audio(let samples):
            audio(samples)
        case .words(let message):
            words(message)
        case .segments(let segments):
            deviceSegments(segments)
        case .renameSpeaker(let speaker, let name):
            rename(speaker, to: name)
        case .mergeSpeakers(let from, let into):
            merge(from, into: into)
        case .finalize:
            finalize()
        case .send(let message):
            environment.transport.send(text: encoder.encode(message), to: connection)
        case .close(let code, let reason):
            environment.transport.close(connection, code: code, reason: reason)
        case .teardown:
            teardown()
        }
    }

    private func begin(_ request: StartRequest) {
        guard environment.plugins.provider(id: request.provider) != nil else {
            let known = environment.plugins.providers.map(\.id).joined(separator: ", ")
            run(machine.failed(ProtocolError(.unknownProvider, "unknown provider '\(request.provider)'; this server has: \(known)")))
            return
        }
        let conversationID = request.conversationID ?? UUID().uuidString.lowercased()
        logger[metadataKey: "conversation"] = "\(conversationID)"
        if let previous = environment.claims.claim(conversationID, by: self) {
            logger.info("conversation resumed on a new connection; handing over")
            previous.handOver()
        }
        let stored: StoredConversation?
        do {
            stored = try environment.store.load(conversationID: conversationID)
        } catch {
            logger.error("cannot load conversation", metadata: ["error": "\(error)"])
            environment.claims.release(conversationID, by: self)
            run(machine.failed(ProtocolError(.storageUnavailable, "cannot load conversation \(conversationID): \(error)")))
            return
        }
        var session = LiveSession(
            request: request, conversationID: conversationID, stored: stored, merge: environment.merge
        )
        if let provider = environment.plugins.provider(id: request.provider), case .plugin = provider.kind {
            do {
                session.engine = try environment.plugins.makeInstance(
                    providerID: request.provider, sessionID: session.sessionToken, sampleRate: 16_000,
                    optionsJSON: request.optionsJSON, knownSpeakers: knownVoices(for: &session)
                )
                if request.sampleRate != 16_000 {
                    session.resampler = try StreamingResampler(inputRate: request.sampleRate)
                }
            } catch {
                // Options the plugin refused are the client's mistake; anything else is the provider's failure.
                let failure = if let refused = error as? PluginError, refused.code == .invalidOptions {
                    ProtocolError(.invalidOptions, "provider \(request.provider) refused the options: \(refused.message)")
                } else {
                    ProtocolError(.providerFailed, "provider \(request.provider) could not start: \(error)")
                }
                environment.claims.release(conversationID, by: self)
                run(machine.failed(failure))
                return
            }
        }
        live = session
        var step = PersistStep()
        step.conversation = session.conversation
        let resumed = stored != nil
        let info = SessionInfo(
            conversationID: conversationID, provider: request.provider, sampleRate: request.sampleRate,
            encoding: request.encoding, resumed: resumed, audioOffsetSeconds: session.audioOffsetSeconds,
            serverVersion: environment.serverVersion, protocolVersion: SessionInfo.protocolVersion
        )
        logger.info("session started", metadata: ["provider": "\(request.provider)", "resumed": "\(resumed)"])
        persist(step, delivery: .firstOutcome) { [self] stored in
            run(machine.send(.session(info)))
            if resumed, let live {
                run(machine.send(.speakers(wireSpeakers(live.speakers))))
                sendUtterances(live.merger.utterances, removed: [], stored: stored, isFinal: false)
            }
        }
    }

    /// The voices the provider should recognise from the start: the device's enrolled people, and this
    /// conversation's speakers from earlier sessions (bound to their labels, so a reconnect keeps them).
    private func knownVoices(for session: inout LiveSession) -> [KnownSpeaker] {
        let provider = session.request.provider
        guard environment.plugins.supportsVoiceEmbedding(providerID: provider) else { return [] }
        let voices: (people: [PersonRecord], speakers: [SpeakerProfileRecord])
        do {
            voices = try environment.store.voices(deviceID: session.request.deviceID, conversationID: session.conversationID, provider: provider)
        } catch {
            logger.warning("cannot load known voices; the session starts without them", metadata: ["error": "\(error)"])
            return []
        }
        var known: [KnownSpeaker] = []
        for (index, person) in voices.people.enumerated() {
            let id = LiveSession.personSpeakerBase + Int32(index)
            known.append(KnownSpeaker(speaker: id, profile: SpeakerProfile(embedding: person.embedding, durationSeconds: person.speechSeconds),
                                      isPermanent: true, name: person.name))
            session.people[id] = person.name
        }
        for (index, profile) in voices.speakers.enumerated() where session.speakers.speaker(profile.label) != nil {
            let id = LiveSession.conversationSpeakerBase + Int32(index)
            known.append(KnownSpeaker(speaker: id, profile: SpeakerProfile(embedding: profile.embedding, durationSeconds: profile.speechSeconds),
                                      isPermanent: false, name: profile.label))
            session.speakers.bind(provider: provider, key: "\(session.sessionToken):\(id)", to: profile.label)
        }
        if !known.isEmpty {
            logger.info("known voices", metadata: ["people": "\(voices.people.count)", "earlier_speakers": "\(voices.speakers.count)"])
        }
        return known
    }

    /// Keeps each speaker's voice profile from this session's provider, so a reconnect (or "save as
    /// person") finds them. Called once the provider has finalized, before it is released.
    private func saveVoiceProfiles(_ engine: DiarizationInstance) {
        guard let session = live, engine.supportsSpeakerProfiles else { return }
        let provider = session.request.provider
        let prefix = "\(provider)/\(session.sessionToken):"
        var best: [String: SpeakerProfileRecord] = [:]
        for (scoped, label) in session.speakers.keyLabels where scoped.hasPrefix(prefix) {
            guard let index = Int32(scoped.dropFirst(prefix.count)),
                  let profile = try? engine.speakerProfile(speaker: index) else { continue }
            let resolved = session.speakers.resolve(label)
            if best[resolved].map({ $0.speechSeconds < profile.durationSeconds }) ?? true {
                best[resolved] = SpeakerProfileRecord(label: resolved, embedding: profile.embedding, speechSeconds: profile.durationSeconds)
            }
        }
        do {
            try environment.store.saveSpeakerProfiles(conversationID: session.conversationID, provider: provider, profiles: Array(best.values))
        } catch {
            logger.warning("cannot keep voice profiles; a reconnect will not recognise these speakers", metadata: ["error": "\(error)"])
        }
    }

    private func audio(_ samples: [Float]) {
        guard live != nil, !live!.finalized else { return }
        live!.inputSampleCount += samples.count
        live!.labelLatency.audioArrived(upTo: live!.audioEndSeconds, at: live!.nowSeconds)
        guard let engine = live!.engine else { return }
        let started = ContinuousClock.now
        let startedCPU = ThreadCPUClock.seconds()
        var providerCPUSeconds = 0.0
        do {
            let pcm = live!.resampler?.process(samples) ?? samples
            if !pcm.isEmpty { try engine.push(samples: pcm) }
            let turns = try engine.pullTurns()
            providerCPUSeconds = ThreadCPUClock.seconds() - startedCPU
            applyProviderTurns(turns)
        } catch {
            providerCPUSeconds = ThreadCPUClock.seconds() - startedCPU
            providerFailed(error)
        }
        // Wall time covers the whole chunk (what the device waits for); CPU only the provider's part.
        live?.recordProcessing(ContinuousClock.now - started, cpuSeconds: providerCPUSeconds)
    }

    private func words(_ message: WordsMessage) {
        guard live != nil else { return }
        let arrived = message.words.indices.map { (id: WordID(message.resultID, $0), endSeconds: message.words[$0].endSeconds) }
        live!.labelLatency.wordsArrived(arrived, at: live!.nowSeconds)
        let delta = live!.merger.upsertResult(id: message.resultID, words: message.words, isFinal: message.isFinal)
        if !delta.removedWords.isEmpty { live!.labelLatency.wordsRemoved(delta.removedWords) }
        commit(delta)
    }

    private func deviceSegments(_ segments: [DeviceSegment]) {
        guard let session = live else { return }
        guard session.request.provider == ProviderDescriptor.deviceID else {
            run(machine.failed(ProtocolError(.invalidField, "segments are accepted only in sessions with provider 'device' (this one uses '\(session.request.provider)')")))
            return
        }
        var step = PersistStep()
        var turns: [SpeakerTurn] = []
        for segment in segments {
            let (label, created) = live!.speakers.label(provider: ProviderDescriptor.deviceID, key: segment.speaker, heardAtSeconds: segment.startSeconds)
            if let created {
                step.speakers.append(created)
                step.keyLabels["\(ProviderDescriptor.deviceID)/\(segment.speaker)"] = created.label
            }
            // A segment re-sent with the same start and speaker replaces the earlier one (it grew).
            let id = "device:\(Int((segment.startSeconds * 1000).rounded())):\(segment.speaker)"
            turns.append(SpeakerTurn(id: id, speaker: label, startSeconds: segment.startSeconds, endSeconds: segment.endSeconds, confidence: segment.confidence))
        }
        step.upsertedTurns = turns.map { (ProviderDescriptor.deviceID, $0) }
        live!.liveTurns.published(turns)
        let delta = live!.merger.upsertTurns(turns)
        commit(delta, step: step)
    }

    /// Maps a provider's turns onto session labels and the conversation timeline, then merges them.
    private func applyProviderTurns(_ providerTurns: [ProviderTurn]) {
        guard !providerTurns.isEmpty, let session = live else { return }
        let provider = session.request.provider
        var step = PersistStep()
        var upserts: [SpeakerTurn] = []
        var removals: [String] = []
        for turn in providerTurns {
            let id = "\(provider):\(session.sessionToken):\(turn.turnID)"
            if turn.isRemoved {
                removals.append(id)
                step.removedTurns.append((provider, id))
                continue
            }
            let start = turn.startSeconds + session.audioOffsetSeconds
            let key = "\(session.sessionToken):\(turn.speaker)"
            var (label, created) = live!.speakers.label(provider: provider, key: key, heardAtSeconds: start)
            if let fresh = created, let person = live!.people[turn.speaker] {
                // An enrolled person: reuse their speaker if the conversation already has them, else name the new one.
                if let existing = live!.speakers.speakers.first(where: { $0.name == person && $0.mergedInto == nil && $0.label != fresh.label }) {
                    live!.speakers.bind(provider: provider, key: key, to: existing.label)
                    step.keyLabels["\(provider)/\(key)"] = existing.label
                    label = existing.label
                    created = nil
                } else if let named = try? live!.speakers.rename(fresh.label, to: person) {
                    created = named
                }
            }
            if let created {
                step.speakers.append(created)
                step.keyLabels["\(provider)/\(key)"] = created.label
            }
            let mapped = SpeakerTurn(id: id, speaker: label, startSeconds: start, endSeconds: turn.endSeconds + session.audioOffsetSeconds, confidence: turn.confidence)
            upserts.append(mapped)
            step.upsertedTurns.append((provider, mapped))
        }
        var delta = removals.isEmpty ? TranscriptDelta() : live!.merger.removeTurns(ids: removals)
        if !upserts.isEmpty {
            live!.liveTurns.published(upserts)
            delta = delta.followed(by: live!.merger.upsertTurns(upserts))
        }
        commit(delta, step: step)
    }

    private func rename(_ label: String, to name: String) {
        guard live != nil else { return }
        do {
            let speaker = try live!.speakers.rename(label, to: name)
            var step = PersistStep()
            step.speakers = [speaker]
            let affected = live!.merger.utterances.filter { $0.speaker == speaker.label }
            persist(step) { [self] stored in
                guard let live else { return }
                run(machine.send(.speakers(wireSpeakers(live.speakers))))
                sendUtterances(affected, removed: [], stored: stored, isFinal: false)
            }
        } catch {
            run(machine.failed(ProtocolError(.unknownSpeaker, error.message)))
        }
    }

    private func merge(_ from: String, into: String) {
        guard live != nil else { return }
        do {
            let (source, target) = try live!.speakers.merge(from, into: into)
            var step = PersistStep()
            step.speakers = [source, target].compactMap { live!.speakers.speaker($0) }
            let delta = live!.merger.mergeSpeaker(source, into: target)
            step.upsertedTurns = live!.merger.turns.filter { $0.speaker == target }.map { (turnProvider($0.id), $0) }
            commit(delta, step: step, announceSpeakers: true)
        } catch {
            run(machine.failed(ProtocolError(error.code == .unknownSpeaker ? .unknownSpeaker : .invalidField, error.message)))
        }
    }

    private func finalize() {
        guard live != nil else {
            run(machine.finalizeCompleted())
            return
        }
        live!.labelLatency.audioEnded(at: live!.nowSeconds)
        drainProvider(finalizing: true)
        live!.finalized = true
        live!.conversation.status = .finalized
        var step = PersistStep()
        step.conversation = live!.currentConversation
        step.conversationEnded = true
        persist(step, delivery: .committedOnly) { [self] stored in
            guard let live else { return }
            run(machine.send(.speakers(wireSpeakers(live.speakers))))
            sendUtterances(live.merger.utterances, removed: [], stored: stored, isFinal: true)
            run(machine.send(.stats(self.live!.stats())))
            logger.info("session finalized", metadata: live.summaryMetadata)
            release()
            run(machine.finalizeCompleted())
        }
    }

    /// The connection ended without finalize: label what can be labelled and store it as interrupted,
    /// so a reconnect with the same conversation_id continues where this left off.
    private func teardown() {
        guard live != nil, !released, !tearingDown else { return }
        tearingDown = true
        drainProvider(finalizing: true)
        live!.finalized = true
        live!.conversation.status = .interrupted
        var step = PersistStep()
        step.conversation = live!.currentConversation
        persist(step, delivery: .firstOutcome) { [self] _ in
            if let live { logger.info("session ended without finalize", metadata: live.summaryMetadata) }
            release()
        }
    }

    /// Runs `body` once this session has stored its last step and released its conversation
    /// (at once when it never started one).
    private func whenReleased(_ body: @escaping @Sendable () -> Void) {
        if live == nil || released { body() } else { releaseWaiters.append(body) }
    }

    private func drainProvider(finalizing: Bool) {
        guard let engine = live?.engine else { return }
        let startedCPU = ThreadCPUClock.seconds()
        do {
            if var resampler = live!.resampler {
                let tail = resampler.flush()
                live!.resampler = resampler
                if !tail.isEmpty { try engine.push(samples: tail) }
            }
            let turns = finalizing ? try engine.finalize() : try engine.pullTurns()
            live?.recordProcessing(cpuSeconds: ThreadCPUClock.seconds() - startedCPU)
            applyProviderTurns(turns)
        } catch {
            providerFailed(error)
        }
        if finalizing {
            saveVoiceProfiles(engine)
            live!.engine = nil
        }
    }

    private func providerFailed(_ error: any Error) {
        logger.error("provider failed", metadata: ["error": "\(error)"])
        live?.engine = nil
        run(machine.failed(ProtocolError(.providerFailed, "the diarization provider failed: \(error)")))
    }

    private func release() {
        guard let live, !released else { return }
        released = true
        environment.claims.release(live.conversationID, by: self)
        let waiters = releaseWaiters
        releaseWaiters = []
        for waiter in waiters { waiter() }
    }

    // MARK: Persist, then tell the device

    /// Stores `delta` (plus `step`) and sends the transcript update once it is committed.
    private func commit(_ delta: TranscriptDelta, step: PersistStep = PersistStep(), announceSpeakers: Bool = false) {
        guard live != nil else { return }
        var step = step
        step.changedWords = delta.changedWords
        step.removedWords = delta.removedWords
        if live!.audioSecondsSinceSave >= 5 { step.conversation = live!.currentConversation }
        let newSpeakers = announceSpeakers || !step.speakers.isEmpty
        guard !step.isEmpty || !delta.isEmpty else { return }
        if step.conversation != nil { live!.markSaved() }
        persist(step) { [self] stored in
            guard let live else { return }
            if newSpeakers { run(machine.send(.speakers(wireSpeakers(live.speakers)))) }
            if !delta.upserted.isEmpty || !delta.removed.isEmpty {
                sendUtterances(delta.upserted, removed: delta.removed, stored: stored, isFinal: false)
            }
        }
    }

    /// When a step's continuation runs. The store reports an outage first (stored: false) and the
    /// commit later (stored: true) for the same step.
    enum Delivery {
        /// Every outcome: transcript updates go out at once marked not stored, and again once stored.
        case everyOutcome
        /// Only the first outcome (the `session` message, hand-over).
        case firstOutcome
        /// Only after the commit (finalize: the final transcript and the close wait for the database).
        case committedOnly
    }

    private func persist(_ step: PersistStep, delivery: Delivery = .everyOutcome, then: @escaping @Sendable (_ stored: Bool) -> Void) {
        guard let conversationID = live?.conversationID else { return }
        if step.isEmpty {
            then(true)
            return
        }
        let delivered = DeliveryFlag()
        environment.store.persist(step, conversationID: conversationID) { [self] result in
            queue.async { [self] in
                let stored: Bool
                switch result {
                case .success:
                    machine.storageRecovered()
                    stored = true
                case .failure(let error):
                    logger.error("store write failed", metadata: ["error": "\(error)"])
                    run(machine.storageFailed(message: "words could not be stored yet: \(error)"))
                    stored = false
                }
                switch delivery {
                case .everyOutcome: then(stored)
                case .firstOutcome: if !delivered.value { then(stored) }
                case .committedOnly: if stored { then(stored) }
                }
                delivered.value = true
            }
        }
    }

    private func sendUtterances(_ utterances: [Utterance], removed: [UtteranceID], stored: Bool, isFinal: Bool) {
        guard live != nil else { return }
        live!.labelLatency.labelsSent(utterances.flatMap { $0.words.map { (id: $0.id, speaker: $0.speaker) } }, at: live!.nowSeconds)
        let live = self.live!
        let wire = utterances.map { utterance in
            WireUtterance(
                id: WireUtterance.wireID(utterance.id.rawValue), speaker: utterance.speaker,
                name: live.speakers.name(for: utterance.speaker), startSeconds: utterance.startSeconds,
                endSeconds: utterance.endSeconds, text: utterance.text,
                words: utterance.words.map { word in
                    WireWord(
                        text: word.text, startSeconds: word.startSeconds, endSeconds: word.endSeconds,
                        speaker: word.speaker, speakerConfidence: word.speakerConfidence, confidence: word.confidence,
                        isFinal: word.isFinal, isStored: stored
                    )
                }
            )
        }
        run(machine.transcriptUpdate(upserted: wire, removed: removed.map { WireUtterance.wireID($0.rawValue) }, isFinal: isFinal))
    }

    private func wireSpeakers(_ registry: SpeakerRegistry) -> [WireSpeaker] {
        registry.speakers.map { WireSpeaker(label: $0.label, name: $0.name, mergedInto: $0.mergedInto) }
    }

    private func turnProvider(_ turnID: String) -> String {
        String(turnID.prefix(while: { $0 != ":" }))
    }
}

/// Whether a step's continuation already ran; only touched on the session's queue.
private final class DeliveryFlag: @unchecked Sendable {
    var value = false
}
