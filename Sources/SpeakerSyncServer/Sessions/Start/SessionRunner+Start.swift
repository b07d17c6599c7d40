import Dispatch
import Foundation
import OpusCodec
import PluginHost
import PostgresClient
import SessionProtocol
import SpeakerSyncAudio
import SpeakerSyncStore
import SpeechRecognition
import TranscriptMerge

/// The start of a session, in four steps, none of which blocks the session's queue:
/// 1. read the device's provider choice and, for a resume, the conversation's owner (start reads);
/// 2. check the provider, shadows, speech recognition, the device's session count; claim the
///    conversation, and wait for a session still holding it to hand it over;
/// 3. load the conversation, the voices the provider should know and the shadows' labellings;
/// 4. create the provider instances, queue the conversation row, and send `session` once it is
///    committed.
/// PostgreSQL reads are retried until `startStorageWaitSeconds` have passed; past that the start is
/// refused with `storage_unavailable` (close 4013) and nothing was acknowledged. Input that arrives
/// meanwhile is held (within the input limit) and handled after `session`. Every failure goes
/// through `failStart`, every abandonment through `abandonStart`: one cleanup path.
extension SessionRunner {
    func begin(_ start: StartRequest) {
        let conversationID = start.conversationID ?? UUID().uuidString.lowercased()
        let deadline = ContinuousClock.now + .seconds(environment.limits.startStorageWaitSeconds)
        starting = PendingStart(request: start, providerSource: start.providerNamed ? "request" : "server",
                                conversationID: conversationID, deadline: deadline)
        logger[metadataKey: "conversation"] = "\(conversationID)"
        let device = principal.deviceID
        let store = environment.store
        readForStart({ () throws -> StartFacts in
            var facts = StartFacts()
            if !start.providerNamed {
                do {
                    facts.deviceProvider = try store.deviceProvider(deviceID: start.deviceID)
                } catch let error where !StartReadRetry.isTransient(error) {
                    // A preference, not a requirement: the server default serves instead.
                    facts.deviceProvider = nil
                }
            }
            if device != nil, start.conversationID != nil {
                facts.owner = try store.owningDevice(conversationID: conversationID)
            }
            return facts
        }, then: checkStart)
    }

    /// Step 2, on the queue: the decision (`SessionStarter`), then the device's session count and
    /// the claim.
    private func checkStart(_ facts: StartFacts) {
        guard var pending = starting else { return }
        let starter = SessionStarter(providers: environment.providers, recognizers: environment.recognizers, logger: logger)
        let decision: SessionStarter.Decision
        switch starter.decide(pending.request, facts: facts, conversationID: pending.conversationID, principalDevice: principal.deviceID) {
        case .success(let decided): decision = decided
        case .failure(let error): return failStart(error)
        }
        pending.request = decision.request
        pending.providerSource = decision.providerSource ?? pending.providerSource
        starting = pending
        let request = decision.request
        guard environment.access.sessionStarting(deviceID: request.deviceID) else {
            return failStart(ProtocolError(.tooManySessions,
                "device '\(request.deviceID)' already runs \(environment.access.config.maxSessionsPerDevice) sessions; retry when one ends"))
        }
        countedDevice = request.deviceID
        starting?.claimed = true
        guard let previous = environment.claims.claim(pending.conversationID, by: self) else { return claimInFleet() }
        logger.info("conversation resumed on a new connection; handing over")
        // The previous session stores what it has first; only then is the conversation loaded, so no
        // acknowledged word is lost and the conversation is not split.
        starting?.reading = true
        previous.handOver { [weak self] in
            guard let self else { return }
            self.queue.async {
                self.starting?.reading = false
                if self.finishAbandonedStart() { return }
                self.claimInFleet()
            }
        }
    }

    /// Step 2b: the conversation's lease in PostgreSQL, shared by every server. Held by another live
    /// server (the device reconnected through a load balancer before that server noticed the old
    /// connection died), that server is asked once to hand it over, and the claim is tried again
    /// every `handoverPollSeconds` until it hands over or its lease lapses, within the start's
    /// deadline; past it the start is refused `conversation_busy` (4013, retry) and nothing was
    /// acknowledged. Never two owners at once: the claim is one conditional statement.
    private func claimInFleet() {
        guard let pending = starting else { return }
        let store = environment.store
        let conversationID = pending.conversationID
        let deviceID = pending.request.deviceID
        readForStart({ try store.claimConversation(conversationID, deviceID: deviceID) }) { [weak self] claim in
            guard let self, var pending = self.starting else { return }
            switch claim {
            case .fenced(let fence):
                pending.fence = fence
                self.starting = pending
                self.loadConversation()
            case .unfenced:
                self.loadConversation()
            case .held(let holder):
                if !pending.handoverAsked {
                    pending.handoverAsked = true
                    self.starting = pending
                    self.logger.info("conversation is live on another server; asking it to hand over", metadata: ["holder": "\(holder)"])
                    self.environment.startReads.async {
                        do { try store.requestHandover(conversationID: conversationID, holder: holder) } catch {
                            // The claim is retried anyway: the holder's lease lapses if it is gone.
                        }
                    }
                }
                guard ContinuousClock.now + .milliseconds(Int(Self.handoverPollSeconds * 1000)) < pending.deadline else {
                    return self.failStart(ProtocolError(.conversationBusy,
                        "conversation \(conversationID) is live on another server that did not hand it over in time; retry"))
                }
                self.starting?.reading = true
                self.queue.asyncAfter(deadline: .now() + Self.handoverPollSeconds) { [weak self] in
                    guard let self else { return }
                    self.starting?.reading = false
                    if self.finishAbandonedStart() { return }
                    self.claimInFleet()
                }
            }
        }
    }

    static let handoverPollSeconds = 0.2

    /// Step 3: the conversation and what the provider should know, read off the queue.
    private func loadConversation() {
        guard let pending = starting else { return }
        let request = pending.request
        let conversationID = pending.conversationID
        let store = environment.store
        let wantsVoices = environment.providers.supportsVoiceEmbedding(providerID: request.provider)
        let log = logger
        readForStart({ () throws -> ConversationFacts in
            var facts = ConversationFacts()
            facts.stored = try store.load(conversationID: conversationID)
            if wantsVoices {
                do {
                    facts.voices = try store.voices(deviceID: request.deviceID, conversationID: conversationID, provider: request.provider)
                } catch let error where !StartReadRetry.isTransient(error) {
                    log.warning("cannot load known voices; the session starts without them", metadata: ["error": "\(error)"])
                }
            }
            if request.storeAudio {
                do {
                    facts.storedAudioSeconds = try store.storedAudioSeconds(deviceID: request.deviceID)
                } catch let error where !StartReadRetry.isTransient(error) {
                    log.warning("cannot read the device's stored audio; its quota is not checked", metadata: ["error": "\(error)"])
                }
            }
            if facts.stored != nil {
                for shadow in request.shadowProviders {
                    do {
                        facts.shadowLabellings[shadow] = try store.labelling(conversationID: conversationID, name: shadow)
                    } catch let error where !StartReadRetry.isTransient(error) {
                        log.warning("cannot load the shadow's stored labelling; it starts afresh", metadata: ["shadow": "\(shadow)", "error": "\(error)"])
                    }
                }
            }
            return facts
        }, then: createSession)
    }

    /// Step 4, on the queue: the provider instances, then the conversation row; `session` once it is stored.
    private func createSession(_ facts: ConversationFacts) {
        guard let pending = starting else { return }
        let request = pending.request
        let diarizesHere: Bool
        if let provider = environment.providers.provider(id: request.provider), case .plugin = provider.kind { diarizesHere = true } else { diarizesHere = false }
        let session = LiveSession(request: request, conversationID: pending.conversationID, stored: facts.stored, merge: environment.merge,
                                  rediarizesGap: diarizesHere && request.asr != .server)
        session.conversation.serverInstance = environment.serverInstance
        session.fence = pending.fence
        if diarizesHere {
            do {
                let sessionRequest = ProviderSessionRequest(
                    providerID: request.provider, sessionID: session.sessionToken, sampleRate: 16_000,
                    optionsJSON: request.optionsJSON, knownSpeakers: knownVoices(facts.voices, for: session))
                session.labelling.engine = try environment.providers.makeSession(sessionRequest, queue: queue) { [weak self] event in
                    self?.providerEvent(event)
                }
                if request.sampleRate != 16_000 {
                    session.resampler = try StreamingResampler(inputRate: request.sampleRate)
                }
            } catch {
                session.labelling.engine?.close()
                return failStart(SessionStarter.startFailure(error, provider: request.provider))
            }
        }
        do throws(ProtocolError) {
            if !request.shadowProviders.isEmpty { try startShadows(session, restored: facts.shadowLabellings) }
            try makeCodecs(session)
        } catch {
            session.labelling.engine?.close()
            for index in session.shadows.indices { session.shadows[index].stop(reason: "the session did not start") }
            return failStart(error)
        }
        if request.storeAudio {
            switch audioAdmission.decide(storedSeconds: facts.storedAudioSeconds, freeDiskBytes: freeDiskBytes()) {
            case .store(let remaining):
                session.audioChunker = AudioChunker(sampleRate: request.sampleRate, timelineOffsetSeconds: session.audioOffsetSeconds)
                session.audioQuotaRemainingSeconds = remaining
            case .refuse(let reason):
                logger.warning("store_audio not honoured", metadata: ["reason": "\(reason)"])
                session.audioNotStoredReason = reason
            }
        }
        live = session
        // The device is told the session began only once its conversation is stored: words it then
        // sees `stored` cannot belong to a conversation PostgreSQL never got.
        var step = PersistStep()
        step.conversation = session.conversation
        starting?.conversationQueued = true
        persist(step, delivery: .committedOnly) { [weak self] _ in self?.startCommitted() }
        armStartDeadline()
    }

    /// The Opus decoder and the speech recogniser, which can refuse the start's sample rate.
    private func makeCodecs(_ session: LiveSession) throws(ProtocolError) {
        let request = session.request
        if request.encoding == .opus {
            do {
                session.opusDecoder = try OpusDecoder(sampleRate: request.sampleRate)
            } catch {
                throw ProtocolError(.internalError, "cannot create an Opus decoder at \(request.sampleRate) Hz")
            }
        }
        if request.asr == .server, let pool = environment.recognizers {
            do {
                session.recognizer = try SessionRecognizer(
                    pool: pool, sampleRate: request.sampleRate, offsetSeconds: session.audioOffsetSeconds,
                    sessionQueue: queue, logger: logger
                ) { [weak self] event in
                    self?.recognizerEvent(event)
                }
            } catch {
                logger.error("speech recogniser could not be created", metadata: ["error": "\(error)"])
                throw ProtocolError(.asrUnavailable, "cannot recognise \(request.sampleRate) Hz audio")
            }
        }
    }

    /// The conversation row is committed: the session has begun.
    private func startCommitted() {
        guard let pending = starting, pending.abandonedReason == nil, let session = live else { return }
        pending.deadlineTimer?.cancel()
        starting = nil
        let request = session.request
        metricsProvider = request.provider
        environment.metrics.increment("speakersync_sessions_started_total", ["provider": request.provider])
        environment.metrics.add(gauge: "speakersync_sessions_active", ["provider": request.provider], 1)
        let resumed = session.isResumed
        let info = SessionInfo(
            conversationID: session.conversationID, provider: request.provider, sampleRate: request.sampleRate,
            encoding: request.encoding, asr: request.asr, resumed: resumed, audioOffsetSeconds: session.audioOffsetSeconds,
            serverVersion: environment.serverVersion, protocolVersion: SessionInfo.protocolVersion,
            providerSource: pending.providerSource
        )
        logger.info("session started", metadata: ["provider": "\(request.provider)", "asr": "\(request.asr.rawValue)", "resumed": "\(resumed)"])
        run(machine.send(.session(info)))
        if let reason = session.audioNotStoredReason { run(machine.failed(ProtocolError(.audioNotStored, reason))) }
        if resumed {
            run(machine.send(.speakers(wireSpeakers(session.labelling.speakers))))
            sendUtterances(session.labelling.merger.utterances, removed: [], stored: true, isFinal: false)
        }
        for entry in pending.held {
            run(entry.actions)
            inputHandled(bytes: entry.bytes)
        }
    }

    /// Past the start's deadline without its conversation stored: refused, try again later.
    private func armStartDeadline() {
        guard let pending = starting else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let remaining = max(0, (pending.deadline - ContinuousClock.now).seconds)
        timer.schedule(deadline: .now() + remaining)
        timer.setEventHandler { [weak self] in
            guard let self, self.starting != nil else { return }
            self.failStart(ProtocolError(.storageUnavailable,
                "the conversation could not be stored within \(Int(self.environment.limits.startStorageWaitSeconds)) s (PostgreSQL is unavailable); nothing was started, try again later"))
        }
        starting?.deadlineTimer = timer
        timer.resume()
    }

    /// Runs `read` on the start-read threads, retrying what PostgreSQL may get over until the
    /// start's deadline; `then` runs on the queue with the result. A read that fails for good, or
    /// past the deadline, fails the start (`storage_unavailable`, 4013: try again later).
    private func readForStart<T: Sendable>(_ read: @escaping @Sendable () throws -> T, then: @escaping @Sendable (T) -> Void) {
        guard let deadline = starting?.deadline else { return }
        starting?.reading = true
        let log = logger
        environment.startReads.async { [weak self] in
            let outcome = StartReadRetry.run(until: deadline, read)
            guard let self else { return }
            self.queue.async {
                self.starting?.reading = false
                if self.finishAbandonedStart() { return }
                switch outcome {
                case .success(let value):
                    then(value)
                case .failure(let error):
                    log.error("session start could not read PostgreSQL", metadata: ["error": "\(error)"])
                    self.failStart(ProtocolError(.storageUnavailable,
                        "the conversation could not be read (PostgreSQL is unavailable); nothing was started, try again later"))
                }
            }
        }
    }

    /// The start is refused: the error (fatal, closing with its code) goes out, and what the start
    /// set up is undone.
    func failStart(_ error: ProtocolError) {
        guard starting != nil else { return }
        logger.info("session start refused", metadata: ["code": "\(error.code.rawValue)"])
        // startFailed returns the error, the close and a teardown; `run` sends the first two now and
        // abandons the start for the third.
        run(machine.startFailed(error))
        if starting != nil { abandonStart(reason: "the start was refused: \(error.code.rawValue)") }
    }

    /// The session ends before `session` was sent: undone now, or when the running read returns.
    func abandonStart(reason: String) {
        guard var pending = starting else { return }
        if pending.abandonedReason == nil { pending.abandonedReason = reason }
        starting = pending
        if !pending.reading { _ = finishAbandonedStart() }
    }

    /// Undoes an abandoned start (the one cleanup path); false when the start was not abandoned.
    @discardableResult
    func finishAbandonedStart() -> Bool {
        guard let pending = starting, let reason = pending.abandonedReason else { return false }
        pending.deadlineTimer?.cancel()
        starting = nil
        for entry in pending.held { inputHandled(bytes: entry.bytes) }
        if let session = live {
            session.labelling.engine?.close()
            session.labelling.engine = nil
            for index in session.shadows.indices { session.shadows[index].stop(reason: "the session did not start") }
            if pending.conversationQueued {
                // Behind the queued row: whenever PostgreSQL takes them, the conversation ends up
                // interrupted (resumable), never active without a session.
                var state = session.conversation
                state.status = .interrupted
                state.statusReason = reason
                var step = PersistStep()
                step.conversation = state
                step.fence = pending.fence
                environment.store.persist(step, conversationID: session.conversationID) { _ in }
            }
        }
        if let fence = pending.fence { releaseLease(pending.conversationID, fence: fence) }
        if pending.claimed { environment.claims.release(pending.conversationID, by: self) }
        released = true
        let waiters = releaseWaiters
        releaseWaiters = []
        for waiter in waiters { waiter() }
        return true
    }

    /// Holds actions back until `session` is sent, with the input bytes that produced them.
    func holdForStart(_ actions: [SessionAction]) {
        starting?.held.append((actions, currentInputBytes))
        currentInputBytes = 0
    }

    /// The voices the provider should recognise from the start: the device's enrolled people, and this
    /// conversation's speakers from earlier sessions (bound to their labels, so a reconnect keeps them).
    private func knownVoices(_ voices: (people: [PersonRecord], speakers: [SpeakerProfileRecord]), for session: LiveSession) -> [KnownSpeaker] {
        var known: [KnownSpeaker] = []
        for (index, person) in voices.people.enumerated() {
            let id = LiveSession.personSpeakerBase + Int32(index)
            known.append(KnownSpeaker(speaker: id, profile: SpeakerProfile(embedding: person.embedding, durationSeconds: person.speechSeconds),
                                      isPermanent: true, name: person.name))
            session.labelling.people[id] = person.name
        }
        for (index, profile) in voices.speakers.enumerated() where session.labelling.speakers.speaker(profile.label) != nil {
            let id = LiveSession.conversationSpeakerBase + Int32(index)
            known.append(KnownSpeaker(speaker: id, profile: SpeakerProfile(embedding: profile.embedding, durationSeconds: profile.speechSeconds),
                                      isPermanent: false, name: profile.label))
            session.labelling.bind(id, to: profile.label)
        }
        if !known.isEmpty {
            logger.info("known voices", metadata: ["people": "\(voices.people.count)", "earlier_speakers": "\(voices.speakers.count)"])
        }
        return known
    }

    /// Another session takes this conversation over: it stops, stores what it has, and `then` runs
    /// once that is stored (on this session's queue; at once when there is nothing to store).
    func handOver(then: @escaping @Sendable () -> Void) {
        queue.async {
            // A fatal error after start makes the state machine emit `.teardown`, which stores what
            // this session has; the new session proceeds once that is committed.
            self.run(self.machine.failed(ProtocolError(.resumedElsewhere, "this conversation was resumed on another connection")))
            self.whenReleased(then)
        }
    }
}
