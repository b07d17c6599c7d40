import SpeakerSyncStore
import Dispatch
import Foundation
import Logging
import OpusCodec
import PluginHost
import SessionProtocol
import SpeakerSyncAudio
import SpeechRecognition
import Synchronization
import TranscriptMerge
import WebSocketTransport

/// What every session of a server shares.
struct SessionEnvironment: Sendable {
    var transport: any SessionTransport
    var store: any SessionStore
    /// The providers: in this process (`--provider-isolation none`) or in worker processes.
    var providers: any ProviderHost
    var claims: ConversationClaims
    var merge: MergeConfig
    var protocolConfig: SessionConfig
    var serverVersion: String
    /// This server's lease number, written into the conversations it runs (nil: a store without leases).
    var serverInstance: Int? = nil
    var logger: Logger
    /// Credentials and per-device limits (sessions per device are counted here).
    var access: AccessGate = AccessGate(config: AccessConfig(mode: .off), book: CredentialBook())
    /// What `GET /metrics` reports.
    var metrics: ServerMetrics = ServerMetrics()
    /// Audio queued for a session beyond this pauses reading from its socket until it drains.
    var backlogPauseBytes: Int = 8 << 20
    var backlogResumeBytes: Int = 2 << 20
    /// Audio handed to a provider worker and not yet processed beyond this pauses reading from the
    /// socket too (a worker slower than the device must not make the server buffer without bound).
    var providerBacklogPauseSamples: Int = 60 * 16_000
    var providerBacklogResumeSamples: Int = 15 * 16_000
    /// Speech recognisers for `asr: "server"` sessions, shared by all sessions (models load on first
    /// use); nil: this server does not recognise speech, and such a start is `asr_unavailable`.
    var recognizers: RecognizerPool? = nil
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
    /// Who opened the connection: a device token binds the session to its device.
    let principal: Principal
    let environment: SessionEnvironment
    let queue: DispatchQueue
    var logger: Logger

    // Confined to `queue`. `live` and the helpers above are internal for the extensions in
    // SessionRunner+*.swift files (shadow providers), not for use from other types.
    private var machine: SessionStateMachine
    var live: LiveSession?
    private var released = false
    private var tearingDown = false
    private var releaseWaiters: [@Sendable () -> Void] = []
    private var idleTimer: (any DispatchSourceTimer)?
    private let encoder = ServerMessageEncoder()
    /// Why the session is ending, when a server-side failure says it better than the state machine's
    /// reason (a provider's crash, the server stopping): stored with the interrupted conversation.
    private var endReason: String?
    /// Runs once the provider's final turns and the recogniser's last words are in (finalize or
    /// teardown waits for them): when neither `live.engine` nor `live.recognizer` is left.
    private var afterAnalysis: (() -> Void)?
    /// The provider was asked for its final turns / the recogniser to finish (each is asked once).
    private var providerFinishing = false
    private var recognizerFinishing = false
    /// Whether reading is paused because the provider has too much audio in flight.
    private var providerBacklogPaused = false
    /// The device whose session count this session holds (from its start until the socket closes).
    private var countedDevice: String?
    /// The provider of a session that began (for its metrics when it ends), and the close code sent.
    private var metricsProvider: String?
    private var sentCloseCode: UInt16?

    // Shared with the service thread.
    private let backlogBytes = Atomic<Int>(0)
    private let receivingPaused = Atomic<Bool>(false)

    init(connection: ConnectionID, environment: SessionEnvironment, principal: Principal = AccessGate.open) {
        self.connection = connection
        self.principal = principal
        self.environment = environment
        self.queue = DispatchQueue(label: "speakersync.session.\(connection.rawValue)")
        self.machine = SessionStateMachine(config: environment.protocolConfig)
        var logger = environment.logger
        logger[metadataKey: "connection"] = "\(connection.rawValue)"
        self.logger = logger
    }

    // MARK: Inputs (service thread)

    func opened(_ request: UpgradeRequest) {
        let query = Redaction.query(request.query)
        queue.async { self.run(self.machine.opened(query: query, deviceID: self.principal.deviceID)) }
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
                self.backlogBytes.subtract(bytes.count, ordering: .relaxed)
                self.resumeReceivingIfDrained()
            }
        }
    }

    /// Resumes reading once both the queued frames and the provider's audio in flight have drained.
    /// Queue only.
    func resumeReceivingIfDrained() {
        let pending = analysisBacklogSamples
        if providerBacklogPaused, pending < environment.providerBacklogResumeSamples {
            providerBacklogPaused = false
        }
        if backlogBytes.load(ordering: .relaxed) < environment.backlogResumeBytes, !providerBacklogPaused,
           receivingPaused.exchange(false, ordering: .relaxed) {
            environment.transport.setReceivingPaused(false, for: connection)
        }
    }

    /// Audio handed over and not yet processed, in 16 kHz samples: the provider's or the speech
    /// recogniser's, whichever is further behind. Queue only.
    private var analysisBacklogSamples: Int {
        let provider = live?.engine?.pendingSampleCount ?? 0
        let recognizer = Int((live?.recognizer?.pendingSeconds ?? 0) * 16_000)
        return max(provider, recognizer)
    }

    /// Pauses reading while the provider or the recogniser has more audio in flight than the limit. Queue only.
    private func pauseReceivingIfProviderBehind() {
        let pending = analysisBacklogSamples
        guard pending > environment.providerBacklogPauseSamples, !providerBacklogPaused else { return }
        providerBacklogPaused = true
        if !receivingPaused.exchange(true, ordering: .relaxed) {
            environment.transport.setReceivingPaused(true, for: connection)
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
            if let device = self.countedDevice {
                self.environment.access.sessionEnded(deviceID: device)
                self.countedDevice = nil
            }
            self.recordEnd()
        }
    }

    /// Session metrics at the end: the close, and the per-session figures (RTF, label latencies).
    private func recordEnd() {
        guard let provider = metricsProvider else { return }
        metricsProvider = nil
        let metrics = environment.metrics
        let labels = ["provider": provider]
        metrics.increment("speakersync_sessions_ended_total", ["provider": provider, "close_code": sentCloseCode.map(String.init) ?? "peer"])
        metrics.add(gauge: "speakersync_sessions_active", labels, -1)
        if let stats = live?.stats() {
            if let factor = stats.realTimeFactor {
                metrics.observe("speakersync_provider_real_time_factor", labels, factor, buckets: ServerMetrics.factorBuckets)
            }
            for latency in stats.firstLabelLatenciesSeconds { metrics.observe("speakersync_word_label_latency_seconds", labels, latency) }
        }
        if let live, live.request.asr == .server, let cpu = live.recognizerCPUSeconds {
            let audio = live.audioEndSeconds - live.audioOffsetSeconds
            if audio > 0 { metrics.observe("speakersync_asr_real_time_factor", [:], cpu / audio, buckets: ServerMetrics.factorBuckets) }
        }
    }

    /// The credential that opened this connection was revoked: the session ends now (error
    /// `credential_revoked`, close 4003) and stores what it has, resumable with a valid credential.
    func credentialRevoked() {
        queue.async {
            self.endReason = self.endReason ?? "its credential was revoked"
            self.run(self.machine.failed(ProtocolError(.credentialRevoked, "the credential this connection was opened with was revoked")))
        }
    }

    /// The server is stopping: a teardown from here on stores "the server stopped" as the reason;
    /// `done` runs once the session has stored what it had (at once if it never started one).
    func serverStopping(_ done: @escaping @Sendable () -> Void) {
        queue.async {
            if self.endReason == nil { self.endReason = "the server stopped" }
            self.whenReleased(done)
        }
    }

    /// Whether the session has stored its last step (any thread; for shutdown's report).
    var isReleased: Bool { queue.sync { live == nil || released } }

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
        case .encodedAudio(let packet, let sampleCount):
            encodedAudio(packet, sampleCount: sampleCount)
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
            sentCloseCode = code
            environment.transport.close(connection, code: code, reason: reason)
        case .teardown(let reason):
            teardown(reason: endReason ?? Self.describe(reason))
        }
    }

    private func begin(_ start: StartRequest) {
        var request = start
        // A start that names no provider gets its device's console choice, then the server default.
        // A chosen provider that is gone or held back falls back to the default rather than failing.
        var providerSource = start.providerNamed ? "request" : "server"
        if !start.providerNamed {
            do {
                if let chosen = try environment.store.deviceProvider(deviceID: start.deviceID) {
                    if environment.providers.isAvailable(chosen) {
                        request.provider = chosen
                        providerSource = "device"
                    } else {
                        logger.warning("the device's provider is not available; using the server default",
                                       metadata: ["device_provider": "\(chosen)", "provider": "\(start.provider)"])
                    }
                }
            } catch {
                logger.warning("cannot read the device's settings; using the server default", metadata: ["error": "\(error)"])
            }
        }
        guard environment.providers.provider(id: request.provider) != nil else {
            let known = environment.providers.providers.map(\.id).joined(separator: ", ")
            run(machine.failed(ProtocolError(.unknownProvider, "unknown provider '\(request.provider)'; this server has: \(known)")))
            return
        }
        if case .unavailable(let reason, _) = environment.providers.status(of: request.provider) {
            run(machine.failed(ProtocolError(.providerUnavailable, "provider \(request.provider) is unavailable: \(reason)")))
            return
        }
        if let failure = shadowProvidersRefusal(request) {
            run(machine.failed(failure))
            return
        }
        if request.asr == .server {
            // Checked before anything is claimed or created. Loads the model the first time (a few
            // tenths of a second, once per process); later starts return at once.
            guard let pool = environment.recognizers else {
                run(machine.failed(ProtocolError(.asrUnavailable, "this server does not recognise speech; send words from the device (asr \"device\")")))
                return
            }
            do {
                try pool.prepare()
            } catch {
                logger.error("speech recogniser unavailable", metadata: ["error": "\(error)"])
                run(machine.failed(ProtocolError(.asrUnavailable, "server-side speech recognition is unavailable: \(error); send words from the device (asr \"device\")")))
                return
            }
        }
        let conversationID = request.conversationID ?? UUID().uuidString.lowercased()
        if let device = principal.deviceID, request.conversationID != nil {
            // A device token resumes only its own device's conversations; it must not even make the
            // other device's session hand over, so this is checked before the claim.
            do {
                if let owner = try environment.store.owningDevice(conversationID: conversationID), owner != device {
                    run(machine.failed(ProtocolError(.conversationNotFound, "this device has no conversation '\(conversationID)'")))
                    return
                }
            } catch {
                run(machine.failed(ProtocolError(.storageUnavailable, "cannot load conversation \(conversationID): \(error)")))
                return
            }
        }
        guard environment.access.sessionStarting(deviceID: request.deviceID) else {
            run(machine.failed(ProtocolError(.tooManySessions,
                "device '\(request.deviceID)' already runs \(environment.access.config.maxSessionsPerDevice) sessions; retry when one ends")))
            return
        }
        countedDevice = request.deviceID
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
        session.conversation.serverInstance = environment.serverInstance
        if let provider = environment.providers.provider(id: request.provider), case .plugin = provider.kind {
            do {
                let sessionRequest = ProviderSessionRequest(
                    providerID: request.provider, sessionID: session.sessionToken, sampleRate: 16_000,
                    optionsJSON: request.optionsJSON, knownSpeakers: knownVoices(for: &session))
                session.engine = try environment.providers.makeSession(sessionRequest, queue: queue) { [weak self] event in
                    self?.providerEvent(event)
                }
                if request.sampleRate != 16_000 {
                    session.resampler = try StreamingResampler(inputRate: request.sampleRate)
                }
            } catch {
                session.engine?.close()
                environment.claims.release(conversationID, by: self)
                run(machine.failed(Self.startFailure(error, provider: request.provider)))
                return
            }
        }
        if !request.shadowProviders.isEmpty {
            do {
                try startShadows(&session, resumed: stored != nil)
            } catch {
                session.engine?.close()
                for index in session.shadows.indices { session.shadows[index].stop(reason: "the session did not start") }
                environment.claims.release(conversationID, by: self)
                run(machine.failed(error))
                return
            }
        }
        if request.encoding == .opus {
            do {
                session.opusDecoder = try OpusDecoder(sampleRate: request.sampleRate)
            } catch {
                session.engine?.close()
                environment.claims.release(conversationID, by: self)
                run(machine.failed(ProtocolError(.internalError, "cannot create an Opus decoder: \(error)")))
                return
            }
        }
        if request.asr == .server, let pool = environment.recognizers {
            do {
                session.recognizer = try SessionRecognizer(
                    pool: pool, sampleRate: request.sampleRate, offsetSeconds: session.audioOffsetSeconds,
                    label: "speakersync.session.\(connection.rawValue)", sessionQueue: queue, logger: logger
                ) { [weak self] event in
                    self?.recognizerEvent(event)
                }
            } catch {
                session.engine?.close()
                environment.claims.release(conversationID, by: self)
                run(machine.failed(ProtocolError(.asrUnavailable, "cannot recognise \(request.sampleRate) Hz audio: \(error)")))
                return
            }
        }
        if request.storeAudio {
            session.audioChunker = AudioChunker(sampleRate: request.sampleRate, timelineOffsetSeconds: session.audioOffsetSeconds)
        }
        live = session
        metricsProvider = request.provider
        environment.metrics.increment("speakersync_sessions_started_total", ["provider": request.provider])
        environment.metrics.add(gauge: "speakersync_sessions_active", ["provider": request.provider], 1)
        var step = PersistStep()
        step.conversation = session.conversation
        let resumed = stored != nil
        let info = SessionInfo(
            conversationID: conversationID, provider: request.provider, sampleRate: request.sampleRate,
            encoding: request.encoding, asr: request.asr, resumed: resumed, audioOffsetSeconds: session.audioOffsetSeconds,
            serverVersion: environment.serverVersion, protocolVersion: SessionInfo.protocolVersion,
            providerSource: providerSource
        )
        logger.info("session started", metadata: ["provider": "\(request.provider)", "asr": "\(request.asr.rawValue)", "resumed": "\(resumed)"])
        persist(step, delivery: .firstOutcome) { [self] stored in
            run(machine.send(.session(info)))
            if resumed, let live {
                run(machine.send(.speakers(wireSpeakers(live.speakers))))
                sendUtterances(live.merger.utterances, removed: [], stored: stored, isFinal: false)
            }
        }
    }

    /// Options the plugin refused are the client's mistake; a provider held back after crashes is
    /// unavailable for now; anything else is the provider's failure.
    private static func startFailure(_ error: any Error, provider: String) -> ProtocolError {
        guard let error = error as? PluginError else {
            return ProtocolError(.providerFailed, "provider \(provider) could not start: \(error)")
        }
        switch error.code {
        case .invalidOptions:
            return ProtocolError(.invalidOptions, "provider \(provider) refused the options: \(error.message)")
        case .providerUnavailable:
            return ProtocolError(.providerUnavailable, "provider \(provider) is unavailable: \(error.message)")
        default:
            return ProtocolError(.providerFailed, "provider \(provider) could not start: \(error)")
        }
    }

    /// The voices the provider should recognise from the start: the device's enrolled people, and this
    /// conversation's speakers from earlier sessions (bound to their labels, so a reconnect keeps them).
    private func knownVoices(for session: inout LiveSession) -> [KnownSpeaker] {
        let provider = session.request.provider
        guard environment.providers.supportsVoiceEmbedding(providerID: provider) else { return [] }
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
    /// person") finds them. Called with the provider's final result, which carries the profiles; a
    /// failed write is retried by the store writer like every step.
    private func saveVoiceProfiles(_ profiles: [Int32: SpeakerProfile]) {
        guard let session = live, !profiles.isEmpty else { return }
        let provider = session.request.provider
        let prefix = "\(provider)/\(session.sessionToken):"
        var best: [String: SpeakerProfileRecord] = [:]
        for (scoped, label) in session.speakers.keyLabels where scoped.hasPrefix(prefix) {
            guard let index = Int32(scoped.dropFirst(prefix.count)), let profile = profiles[index] else { continue }
            let resolved = session.speakers.resolve(label)
            if best[resolved].map({ $0.speechSeconds < profile.durationSeconds }) ?? true {
                best[resolved] = SpeakerProfileRecord(label: resolved, embedding: profile.embedding, speechSeconds: profile.durationSeconds)
            }
        }
        // Through the store writer with the session's other writes: a session thread never waits for
        // PostgreSQL (a hundred sessions finalizing at once used to queue on one connection here).
        var step = PersistStep()
        step.speakerProfiles = best.values.sorted { $0.label < $1.label }.map { (provider, $0) }
        persist(step, delivery: .firstOutcome) { _ in }
    }

    private func audio(_ samples: [Float]) {
        guard live != nil, !live!.finalized else { return }
        live!.inputSampleCount += samples.count
        if live!.audioChunker != nil, case let chunks = live!.audioChunker!.append(samples), !chunks.isEmpty {
            // Stored in the session's step order, after the conversation row; a failure shows as
            // stored:false on the words like any other store failure.
            var step = PersistStep()
            step.audioChunks = chunks
            persist(step) { _ in }
        }
        live!.labelLatency.audioArrived(upTo: live!.audioEndSeconds, at: live!.nowSeconds)
        for index in live!.shadows.indices {
            live!.shadows[index].labelLatency.audioArrived(upTo: live!.audioEndSeconds, at: live!.nowSeconds)
        }
        if let recognizer = live!.recognizer {
            recognizer.push(samples)
            if live!.engine == nil { pauseReceivingIfProviderBehind() }
        }
        guard live!.engine != nil || live!.shadows.contains(where: \.isRunning) else { return }
        let pcm = live!.resampler?.process(samples) ?? samples
        // The session's own provider first: with --provider-isolation none a push runs the provider
        // inside the call, and the shadows must not delay the device's labels.
        if let engine = live!.engine {
            // Even an empty push goes out: the chunk's processing time is recorded when it comes back.
            engine.push(samples: pcm)
        }
        pushToShadows(pcm)
        if live?.engine != nil { pauseReceivingIfProviderBehind() }
    }

    /// An Opus packet: decoded at the session's rate and then handled exactly like PCM. A packet
    /// libopus refuses despite valid framing is replaced by silence of its length (the state machine
    /// has already counted its samples, and words after it must keep their place on the timeline).
    private func encodedAudio(_ packet: [UInt8], sampleCount: Int) {
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
    private func providerEvent(_ event: ProviderEvent) {
        guard live != nil else { return }
        switch event {
        case .processed(let chunk):
            // Wall time from handing the chunk over to its turns (what the device waits for); CPU is the provider's.
            live!.recordProcessing(chunkWallSeconds: chunk.chunkWallSeconds, cpuSeconds: chunk.cpuSeconds)
            for seconds in chunk.chunkWallSeconds {
                environment.metrics.observe("speakersync_provider_chunk_seconds", ["provider": live!.request.provider], seconds)
            }
            applyProviderTurns(chunk.turns)
            // The periodic snapshot: stored now, so a resume after a crash knows these voices.
            saveVoiceProfiles(chunk.profiles)
            resumeReceivingIfDrained()
        case .finalized(let result):
            live!.recordProcessing(cpuSeconds: result.cpuSeconds)
            applyProviderTurns(result.turns)
            saveVoiceProfiles(result.profiles)
            live!.engine?.close()
            live!.engine = nil
            runAfterAnalysisIfDone()
        case .failed(let error):
            providerFailed(error)
        }
    }

    private func words(_ message: WordsMessage) {
        guard live != nil else { return }
        environment.metrics.increment("speakersync_words_received_total", by: Double(message.words.count))
        mergeWords(message)
    }

    /// What the session's speech recogniser reports (asr "server"), on the queue.
    private func recognizerEvent(_ event: RecognizerEvent) {
        guard live != nil else { return }
        switch event {
        case .processed(let utterances):
            serverWords(utterances)
            resumeReceivingIfDrained()
        case .finished(let utterances, let cpuSeconds):
            serverWords(utterances)
            live!.recognizer = nil
            live!.recognizerCPUSeconds = cpuSeconds
            runAfterAnalysisIfDone()
        }
    }

    /// Each decoded utterance becomes one final ASR result, merged exactly as a device's `words`
    /// message: result id `asr:<session token>:<n>` (unique in the conversation across resumes, as a
    /// device's result ids are), the recogniser's confidences, the same labelling, storing and updates.
    private func serverWords(_ utterances: [RecognizedUtterance]) {
        for utterance in utterances {
            if let failure = utterance.failure {
                logger.warning("speech recogniser failed on an utterance; its words are lost", metadata: [
                    "start_seconds": "\(utterance.startSeconds)", "end_seconds": "\(utterance.endSeconds)", "error": "\(failure)",
                ])
                environment.metrics.increment("speakersync_asr_failures_total", ["code": failure.code.rawValue])
            }
            guard !utterance.words.isEmpty, live != nil else { continue }
            environment.metrics.increment("speakersync_asr_words_total", by: Double(utterance.words.count))
            mergeWords(WordsMessage(resultID: "asr:\(live!.sessionToken):\(utterance.index)", isFinal: true,
                                    words: utterance.words.map(\.word)))
        }
    }

    /// Words of the device's ASR or the server's: labelled by the merge, stored, sent as updates.
    private func mergeWords(_ message: WordsMessage) {
        guard live != nil else { return }
        let arrived = message.words.indices.map { (id: WordID(message.resultID, $0), endSeconds: message.words[$0].endSeconds) }
        live!.labelLatency.wordsArrived(arrived, at: live!.nowSeconds)
        let delta = live!.merger.upsertResult(id: message.resultID, words: message.words, isFinal: message.isFinal)
        if !delta.removedWords.isEmpty { live!.labelLatency.wordsRemoved(delta.removedWords) }
        for index in live!.shadows.indices {
            live!.shadows[index].upsertResult((message.resultID, message.words, message.isFinal), arrived: arrived, at: live!.nowSeconds)
        }
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
        for index in live!.shadows.indices { live!.shadows[index].labelLatency.audioEnded(at: live!.nowSeconds) }
        finishAnalysis { [self] in
            guard live != nil else { return }
            live!.finalized = true
            live!.conversation.status = .finalized
            var step = PersistStep()
            step.conversation = live!.currentConversation
            step.conversationEnded = true
            step.labellings = labellings(interruptedReason: nil)
            if let last = live!.audioChunker?.flush() { step.audioChunks = [last] }
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
    }

    /// The connection ended without finalize: label what can be labelled and store it as interrupted,
    /// so a reconnect with the same conversation_id continues where this left off.
    private func teardown(reason: String) {
        guard live != nil, !released, !tearingDown else { return }
        tearingDown = true
        let store = { [self] in
            guard live != nil else { return }
            live!.finalized = true
            live!.conversation.status = .interrupted
            live!.conversation.statusReason = reason
            var step = PersistStep()
            step.conversation = live!.currentConversation
            step.labellings = labellings(interruptedReason: reason)
            if let last = live!.audioChunker?.flush() { step.audioChunks = [last] }
            persist(step, delivery: .firstOutcome) { [self] _ in
                if let live { logger.info("session ended without finalize", metadata: live.summaryMetadata) }
                release()
            }
        }
        if afterAnalysis != nil {
            // A finalize is waiting for the provider and recogniser already: store as interrupted when
            // they are done.
            afterAnalysis = store
        } else {
            finishAnalysis(then: store)
        }
    }

    /// Runs `body` once this session has stored its last step and released its conversation
    /// (at once when it never started one).
    private func whenReleased(_ body: @escaping @Sendable () -> Void) {
        if live == nil || released { body() } else { releaseWaiters.append(body) }
    }

    /// Asks the provider for its final turns (flushing the resampler's tail first) and the speech
    /// recogniser for its last utterance, both at once, and runs `body` once both are applied (at once
    /// when there is neither, or they are done or failed already). Each is asked only once, so a
    /// teardown that follows an abandoned finalize waits for what is still under way.
    private func finishAnalysis(then body: @escaping () -> Void) {
        afterAnalysis = body
        if live != nil, !providerFinishing {
            providerFinishing = true
            var tail: [Float] = []
            if var resampler = live!.resampler {
                tail = resampler.flush()
                live!.resampler = resampler
            }
            if let engine = live!.engine {
                if !tail.isEmpty { engine.push(samples: tail) }
                engine.finalize()
            }
            finishShadows(tail: tail)
        }
        if let recognizer = live?.recognizer, !recognizerFinishing {
            recognizerFinishing = true
            recognizer.finish()
        }
        runAfterAnalysisIfDone()
    }

    /// Runs the waiting finalize or teardown once neither the provider nor the recogniser is left.
    func runAfterAnalysisIfDone() {
        guard live?.engine == nil, live?.recognizer == nil, live?.shadows.contains(where: \.isRunning) != true,
              let body = afterAnalysis else { return }
        afterAnalysis = nil
        body()
    }

    /// The provider failed (a plugin error, or its worker crashed or hung): the session ends with
    /// `provider_failed` (1011) and what it has is stored as interrupted, so the device can resume,
    /// with this provider or another.
    private func providerFailed(_ error: PluginError) {
        logger.error("provider failed", metadata: ["error": "\(error)"])
        environment.metrics.increment("speakersync_provider_failures_total",
                                      ["provider": live?.request.provider ?? "unknown", "code": error.code.rawValue])
        live?.engine?.close()
        live?.engine = nil
        if tearingDown {
            // The connection had ended already; the waiting teardown stores the conversation as
            // interrupted (once the recogniser, if any, is done too).
            runAfterAnalysisIfDone()
            return
        }
        // A finalize waiting for the final turns is abandoned: the fatal error tears the session down
        // instead, which stores it as interrupted, not finalized.
        afterAnalysis = nil
        let message = error.code == .providerCrashed || error.code == .providerHung
            ? error.message : "the diarization provider failed: \(error)"
        endReason = message
        run(machine.failed(ProtocolError(.providerFailed, message)))
    }

    /// The stored reason of a session that ended without finalize.
    private static func describe(_ reason: SessionEndReason) -> String {
        switch reason {
        case .peerClosed: "the connection closed before finalize"
        case .idleTimeout: "no message within the idle limit"
        case .error(let code): "the session ended with error \(code.rawValue)"
        }
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
                    if !step.changedWords.isEmpty {
                        environment.metrics.increment("speakersync_words_stored_total", by: Double(step.changedWords.count))
                    }
                case .failure(let error):
                    environment.metrics.increment("speakersync_store_failures_total")
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

// MARK: Console (any thread but the session's queue)

extension SessionRunner {
    /// A rename or merge asked for over HTTP, applied by this live session as if its device had sent
    /// it (so the device gets the update and the session's next save keeps it). A refused change is
    /// an HTTP error, not the end of the device's session. nil: no started session to apply it to.
    func changeSpeaker(_ label: String, _ change: SpeakerChange) -> Result<[SessionSpeaker], APIError>? {
        queue.sync { () -> Result<[SessionSpeaker], APIError>? in
            guard let current = live, !released, !tearingDown else { return nil }
            var probe = current.speakers
            do throws(APIError) {
                _ = try change.apply(to: &probe, label: label)
            } catch {
                return .failure(error)
            }
            switch change {
            case .rename(let name): rename(label, to: name)
            case .merge(let target): merge(label, into: target)
            }
            return .success(live?.speakers.speakers ?? probe.speakers)
        }
    }

    /// The session as the console shows it, or nil before its start was accepted. Waits for the
    /// session's queue, so call it from an HTTP worker, never from the queue or the service thread.
    func snapshot(includeTranscript: Bool) -> LiveSessionSnapshot? {
        queue.sync { () -> LiveSessionSnapshot? in
            guard let live, !released else { return nil }
            let stats = live.stats()
            var names: [String: String] = [:]
            for speaker in live.speakers.speakers { names[speaker.label] = speaker.name }
            return LiveSessionSnapshot(
                conversationID: live.conversationID, deviceID: live.request.deviceID, provider: live.request.provider,
                startedAt: live.startedAt, audioSeconds: stats.audioSeconds, wordCount: stats.wordCount,
                unlabelledWordCount: stats.unlabelledWordCount, speakerCount: stats.speakerCount,
                realTimeFactor: stats.realTimeFactor, firstLabelLatenciesSeconds: stats.firstLabelLatenciesSeconds,
                recentChunkSeconds: Array(stats.chunkProcessingSeconds.suffix(LiveSessionSnapshot.recentChunkLimit)),
                finalized: live.finalized,
                transcript: includeTranscript
                    ? TranscriptDocument(conversationID: live.conversationID, utterances: live.merger.utterances, names: names)
                    : nil)
        }
    }
}

/// Whether a step's continuation already ran; only touched on the session's queue.
private final class DeliveryFlag: @unchecked Sendable {
    var value = false
}
