import SpeakerSyncStore
import Dispatch
import Foundation
import Logging
import PluginHost
import SessionProtocol
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
    /// What one session may hold in memory, and how long its start may wait for PostgreSQL.
    var limits: SessionLimits = .default
    /// Speech recognisers for `asr: "server"` sessions, shared by all sessions (models load on first
    /// use); nil: this server does not recognise speech, and such a start is `asr_unavailable`.
    var recognizers: RecognizerPool? = nil
    /// Where session starts read PostgreSQL (a few threads for every session), so a session's queue
    /// never waits for it.
    var startReads: BlockingWorkQueue = SessionEnvironment.sharedStartReads
    /// The folder whose disk holds the data (the embedded cluster's), for the free-space watermark of
    /// stored audio; nil: not known (an external PostgreSQL), not checked.
    var dataDirectory: String? = nil

    /// One for the process: its threads live as long as it does.
    static let sharedStartReads = BlockingWorkQueue(label: "speakersync.session-starts", threadCount: 4)
}

/// One WebSocket session: feeds the pure `SessionStateMachine` and carries out its actions.
///
/// Threading: the lws service thread calls `opened`, `received`, `rejected` and `closed`, which only
/// enqueue onto `queue`. Everything else — the state machine, the provider instance, the merger, the
/// speaker registry — is confined to `queue`, a serial queue per session, which is why the class can
/// be `@unchecked Sendable`. Store completions and start reads come back onto `queue` too, so updates
/// go out in the order the steps were made.
///
/// The runner's work is split by concern over SessionRunner+*.swift: the start (+Start), the
/// provider and the device's edits (+Provider), persist-then-deliver and the acknowledgement
/// contract (+Delivery), reading pauses (+Backpressure), the end of a session (+Ending) and shadow
/// providers (+Shadows). Their state lives here, internal only for those extensions.
final class SessionRunner: @unchecked Sendable {
    let connection: ConnectionID
    /// Who opened the connection: a device token binds the session to its device.
    let principal: Principal
    let environment: SessionEnvironment
    let queue: DispatchQueue
    var logger: Logger
    let gate: ReceiveGate

    // Confined to `queue`.
    var machine: SessionStateMachine
    /// The started session; nil before its start got as far as creating the provider, and after a
    /// start that failed.
    var live: LiveSession?
    /// A start between `.begin` and the `session` message (see SessionRunner+Start.swift).
    var starting: PendingStart?
    var released = false
    var tearingDown = false
    var releaseWaiters: [@Sendable () -> Void] = []
    var idleTimer: (any DispatchSourceTimer)?
    let encoder = ServerMessageEncoder()
    /// Why the session is ending, when a server-side failure says it better than the state machine's
    /// reason (a provider's crash, the server stopping): stored with the interrupted conversation.
    var endReason: String?
    /// Runs once the provider's final turns and the recogniser's last words are in (finalize or
    /// teardown waits for them): when neither `live.engine` nor `live.recognizer` is left.
    var afterAnalysis: (() -> Void)?
    /// The provider was asked for its final turns / the recogniser to finish (each is asked once).
    var providerFinishing = false
    var recognizerFinishing = false
    /// The device whose session count this session holds (from its start until the socket closes).
    var countedDevice: String?
    /// The provider of a session that began (for its metrics when it ends), and the close code sent.
    var metricsProvider: String?
    var sentCloseCode: UInt16?
    /// Store steps persisted and not yet committed, and their estimated bytes (backpressure).
    var pendingSteps = 0
    var pendingStepBytes = 0
    /// A finalize waiting for the session's earlier steps to commit before it builds its own.
    var afterStepsSettled: (@Sendable () -> Void)?
    /// PostgreSQL refused one of this session's steps for good: nothing after it is acknowledged.
    var storageRejected = false
    /// When the outgoing queue went over its pause level (nil: under it).
    var outboundOverSince: ContinuousClock.Instant?
    var outboundTimer: (any DispatchSourceTimer)?
    /// Bytes of the input being handled right now; taken by `run` when it holds the actions back.
    var currentInputBytes = 0

    // Shared with the service thread: frames received and not yet handled (including held ones).
    let inputBacklog = Atomic<Int>(0)

    /// Where every session's queue runs: the global pool that does not overcommit, about a thread per
    /// core. A serial queue's default target overcommits (a thread for each queue with work), so 500
    /// sessions ending within a second woke hundreds of threads, and the kernel's task switching took
    /// 17 % of the server's samples. On this pool the same bench ran with 11–28 % less server CPU and a
    /// lower p99 in each of three paired runs (docs/benchmarks.md). It relies on what the session code already
    /// keeps to: a session's queue never blocks (PostgreSQL reads run on `startReads`, sends to a
    /// provider worker never wait, a provider in this process only computes).
    static let queueTarget = DispatchQueue.global()

    init(connection: ConnectionID, environment: SessionEnvironment, principal: Principal = AccessGate.open) {
        self.connection = connection
        self.principal = principal
        self.environment = environment
        self.queue = DispatchQueue(label: "speakersync.session.\(connection.rawValue)", target: Self.queueTarget)
        self.machine = SessionStateMachine(config: environment.protocolConfig)
        self.gate = ReceiveGate(transport: environment.transport, connection: connection)
        var logger = environment.logger
        logger[metadataKey: "connection"] = "\(connection.rawValue)"
        self.logger = logger
    }

    // MARK: Inputs (service thread)

    func opened(_ request: UpgradeRequest) {
        let query = Redaction.query(request.query)
        let invalidText = request.invalidTextParameters
        queue.async { self.run(self.machine.opened(query: query, deviceID: self.principal.deviceID, invalidTextParameters: invalidText)) }
        startIdleTimer()
    }

    /// Ticks the state machine's idle check every `idleIntervalSeconds`; a session that sent nothing
    /// (not even a keepalive) for a whole interval is closed with `idle_timeout` (4000) and stays resumable.
    /// Not while the server itself has paused reading: the device may be sending into a full socket.
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
                if self.gate.isPaused || self.starting != nil {
                    self.machine.noteActivity()
                    return
                }
                self.run(self.machine.idleTimeout())
            }
            self.idleTimer = timer
            timer.resume()
        }
    }

    func received(_ message: WebSocketMessage) {
        let bytes = message.byteCount
        let backlog = inputBacklog.add(bytes, ordering: .relaxed).newValue
        if backlog > environment.limits.inputPauseBytes { gate.pause(.input) }
        queue.async {
            self.currentInputBytes = bytes
            switch message {
            case .text(let text): self.run(self.machine.receivedText(text))
            case .binary(let data): self.run(self.machine.receivedBinary(data))
            }
            // Still ours unless `run` held the actions back for after the start (it took the bytes then).
            self.inputHandled(bytes: self.currentInputBytes)
            self.currentInputBytes = 0
        }
    }

    func rejected(byteCount: Int) {
        queue.async { self.run(self.machine.receivedTooLarge(byteCount: byteCount)) }
    }

    func closed() {
        queue.async {
            self.idleTimer?.cancel()
            self.idleTimer = nil
            self.outboundTimer?.cancel()
            self.outboundTimer = nil
            self.run(self.machine.peerClosed())
            if let device = self.countedDevice {
                self.environment.access.sessionEnded(deviceID: device)
                self.countedDevice = nil
            }
            self.recordEnd()
            MemoryReclaimer.shared.connectionClosed()
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
            metrics.observe("speakersync_word_label_latency_seconds", labels, values: stats.firstLabelLatenciesSeconds)
        }
        if let live, live.request.asr == .server, let cpu = live.recognizerCPUSeconds {
            let audio = live.sessionAudioSeconds
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

    /// This server's fleet lease lapsed: other servers may claim the conversation now, so the session
    /// ends (`server_stopping`, close 1001: resume, through the load balancer, elsewhere). What it
    /// still queues is written only if nobody claimed the conversation meanwhile (the fence).
    func leaseLapsed() {
        queue.async {
            self.endReason = self.endReason ?? "the server's fleet lease lapsed"
            self.run(self.machine.failed(ProtocolError(.serverStopping,
                "this server lost its lease in PostgreSQL; resume with the same conversation_id (another server takes it)")))
        }
    }

    /// Whether the session has stored its last step (any thread; for shutdown's report).
    var isReleased: Bool { queue.sync { (live == nil && starting == nil) || released } }

    // MARK: Actions (queue)

    /// Carries out the state machine's actions. While a start is under way they are held back and
    /// carried out once `session` is sent (so `session` is always the first message of a started
    /// session), unless they end the session: then the error and the close go out now and the start
    /// is abandoned.
    func run(_ actions: [SessionAction]) {
        guard !actions.isEmpty else { return }
        if starting != nil {
            let ends = actions.contains { action in
                switch action {
                case .close, .teardown: true
                default: false
                }
            }
            if ends {
                var teardownReason: SessionEndReason?
                for action in actions {
                    if case .teardown(let reason) = action { teardownReason = reason } else { perform(action) }
                }
                abandonStart(reason: endReason ?? Self.describe(teardownReason ?? .peerClosed))
                return
            }
            holdForStart(actions)
            return
        }
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
            send(encoder.encode(message))
        case .close(let code, let reason):
            sentCloseCode = code
            if code == CloseCode.slowReader {
                // The client reads nothing: what is queued for it would never go out before the close.
                environment.transport.closeDiscardingQueued(connection, code: code, reason: reason)
            } else {
                environment.transport.close(connection, code: code, reason: reason)
            }
        case .teardown(let reason):
            teardown(reason: endReason ?? Self.describe(reason))
        }
    }

    /// The stored reason of a session that ended without finalize.
    static func describe(_ reason: SessionEndReason) -> String {
        switch reason {
        case .peerClosed: "the connection closed before finalize"
        case .idleTimeout: "no message within the idle limit"
        case .error(let code): "the session ended with error \(code.rawValue)"
        }
    }
}

// MARK: Console (any thread)

extension SessionRunner {
    /// A rename or merge asked for over HTTP, applied by this live session as if its device had sent
    /// it (so the device gets the update and the session's next save keeps it). A refused change is
    /// an HTTP error, not the end of the device's session. `reply` runs on the session's queue with
    /// nil when there is no started session to apply it to; the caller never waits for the queue.
    func changeSpeaker(_ label: String, _ change: SpeakerChange, reply: @escaping @Sendable (Result<[SessionSpeaker], APIError>?) -> Void) {
        queue.async { [self] in
            guard let current = live, starting == nil, !released, !tearingDown else { return reply(nil) }
            var probe = current.labelling.speakers
            do throws(APIError) {
                _ = try change.apply(to: &probe, label: label)
            } catch {
                return reply(.failure(error))
            }
            switch change {
            case .rename(let name): rename(label, to: name)
            case .merge(let target): merge(label, into: target)
            }
            reply(.success(live?.labelling.speakers.speakers ?? probe.speakers))
        }
    }

    /// The session as the console shows it, or nil before its start was accepted; `reply` runs on
    /// the session's queue, so the caller (an HTTP worker) never waits for it.
    func snapshot(includeTranscript: Bool, reply: @escaping @Sendable (LiveSessionSnapshot?) -> Void) {
        queue.async { [self] in reply(snapshotOnQueue(includeTranscript: includeTranscript)) }
    }

    private func snapshotOnQueue(includeTranscript: Bool) -> LiveSessionSnapshot? {
        guard let live, starting == nil, !released else { return nil }
        let stats = live.stats()
        var names: [String: String] = [:]
        for speaker in live.labelling.speakers.speakers { names[speaker.label] = speaker.name }
        return LiveSessionSnapshot(
            conversationID: live.conversationID, deviceID: live.request.deviceID, provider: live.request.provider,
            startedAt: live.startedAt, audioSeconds: stats.audioSeconds, wordCount: stats.wordCount,
            unlabelledWordCount: stats.unlabelledWordCount, speakerCount: stats.speakerCount,
            realTimeFactor: stats.realTimeFactor, firstLabelLatenciesSeconds: stats.firstLabelLatenciesSeconds,
            recentChunkSeconds: Array(stats.chunkProcessingSeconds.suffix(LiveSessionSnapshot.recentChunkLimit)),
            finalized: live.finalized,
            transcript: includeTranscript
                ? TranscriptDocument(conversationID: live.conversationID, utterances: live.labelling.merger.utterances, names: names)
                : nil,
            fence: live.fence)
    }
}
