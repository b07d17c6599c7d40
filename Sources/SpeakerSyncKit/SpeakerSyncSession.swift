import Dispatch
import Foundation
import Logging

/// One conversation streamed to SpeakerSync that survives drops: the app gives audio, ASR results,
/// device segments and speaker edits whenever it has them; the session sends them while connected,
/// keeps them while not, and after any disconnect reconnects (backoff with jitter), resumes the
/// conversation where the server's stored audio ends, and sends again whatever the server may not have
/// stored: the audio from there on, every result not yet echoed back `stored`, the segments after it
/// and those labelling a result not yet stored (`DeliveryLedger.segmentsToResend`).
/// A `result_id` replaces its earlier version on the server, so nothing is stored twice.
///
/// Threading: every method may be called from any thread; all state lives on one serial queue, and
/// socket events are queued onto it in the order they arrive. Events for the app come through
/// `events` (an `AsyncStream`) in order.
public final class SpeakerSyncSession: @unchecked Sendable {
    public let config: SpeakerSyncSessionConfig
    public let events: AsyncStream<SessionEvent>
    private let continuation: AsyncStream<SessionEvent>.Continuation
    private let sockets: any SessionSocketFactory
    private let logger: Logger
    private let queue = DispatchQueue(label: "speakersync.kit.session")
    /// Every server message as received (JSON text), for tools that keep their own record.
    private let onMessage: (@Sendable (String) -> Void)?
    /// The protocol's own codec, shared with the server: nothing here writes or reads JSON by hand.
    private let encoder = ClientMessageEncoder()
    private let decoder = ServerMessageDecoder()

    // Confined to `queue`.
    private var audio: AudioRetention
    private var ledger = DeliveryLedger()
    private var liveTranscript = LiveTranscript()
    private var connection: Connection?
    private var connectionSerial = 0
    /// Conversation-timeline seconds of the session's sample 0 (from the first `session` message).
    private var origin: Double?
    /// Set when a resume found the retention no longer holding the server's resume point: the next
    /// start names this offset explicitly (the audio that was dropped is a gap, not a shift).
    private var forcedOffsetSeconds: Double?
    private var pendingControls: [String] = []
    private var attempt = 0
    private var finishRequested = false
    private var stopRequested = false
    private var outcome: SessionOutcome?
    private var waiters: [CheckedContinuation<SessionOutcome, Never>] = []
    private var lastError: (code: String, message: String)?
    private var state: ConnectionState = .connecting
    private var reconnectWork: DispatchWorkItem?
    private var startTimer: DispatchWorkItem?
    /// Why the last connection ended, for the start timeout's message.
    private var lastDropReason: String?
    private var sessionsStarted = 0

    /// The last connection's close code (nil: it never got a close frame).
    public var lastCloseCode: UInt16? { queue.sync { _lastCloseCode } }
    private var _lastCloseCode: UInt16?

    private final class Connection {
        let serial: Int
        let socket: any SessionSocket
        var live = false
        var finalizeSent = false
        var openTimer: DispatchWorkItem?
        /// The fatal `error` the server sent on this connection: it decides over the close code that follows.
        var fatalError: (code: String, message: String)?
        init(serial: Int, socket: any SessionSocket) {
            self.serial = serial
            self.socket = socket
        }
    }

    public init(config: SpeakerSyncSessionConfig, sockets: any SessionSocketFactory, logger: Logger,
                onMessage: (@Sendable (String) -> Void)? = nil) {
        self.config = config
        self.sockets = sockets
        self.logger = logger
        self.onMessage = onMessage
        let capacity = Int64(max(1, config.retentionSeconds) * Double(config.sampleRate))
        // A spool that cannot be created (read-only disk) falls back to memory rather than failing the session.
        let spool = config.spoolDirectory.flatMap { folder in
            try? AudioSpool(directory: folder.appendingPathComponent(config.conversationID), samplesPerFile: Int64(60 * config.sampleRate))
        }
        audio = AudioRetention(bytesPerSample: config.format.bytesPerSample, capacitySamples: capacity, spool: spool)
        // Bounded: an app that never reads `events` (it can read `transcript` instead) must not grow
        // memory over a long meeting; a reader that falls 4096 events behind loses the oldest.
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
    }

    // MARK: The app's side

    /// Starts connecting; audio and words given before the session is up are sent once it is.
    /// A start the server could not store (a NUL in the conversation id, device id, language or
    /// provider) ends the session `refused` with `invalid_text` without connecting.
    public func start() {
        queue.async {
            guard self.outcome == nil, self.startTimer == nil else { return }
            if let problem = UnstorableText.problem(fields: [
                ("conversation_id", self.config.conversationID), ("device_id", self.config.deviceID),
                ("provider", self.config.provider), ("language", self.config.language), ("asr", self.config.asr),
            ] + self.config.shadowProviders.map { ("shadow_providers", $0) }) {
                self.end(.refused(ConnectionFailure(errorCode: "invalid_text", message: problem + UnstorableText.consequence)))
                return
            }
            if let asr = self.config.asr, ASRMode(rawValue: asr) == nil {
                // The start's `asr` is typed on the wire: what the server would refuse is refused here.
                let modes = ASRMode.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
                self.end(.refused(ConnectionFailure(errorCode: "invalid_field", message: "asr must be \(modes), got \"\(asr)\"")))
                return
            }
            let timer = DispatchWorkItem { [weak self] in self?.startTimedOut() }
            self.startTimer = timer
            if let limit = self.config.startTimeoutSeconds { self.queue.asyncAfter(deadline: .now() + max(0, limit), execute: timer) }
            self.connect()
        }
    }

    /// Mono samples in -1…1 at `config.sampleRate` (PCM formats; Opus goes through `send(pcm:sampleCount:)`).
    public func send(samples: [Float]) {
        let bytes = PCMEncoding.encode(samples, as: config.format)
        send(pcm: bytes, sampleCount: samples.count)
    }

    /// Audio already in `config.format`: whole PCM samples, or one Opus packet and the samples it holds.
    public func send(pcm bytes: [UInt8], sampleCount: Int) {
        queue.async {
            guard self.outcome == nil else { return }
            let frame = self.audio.append(bytes, sampleCount: sampleCount)
            if let connection = self.connection, connection.live { connection.socket.send(binary: frame.bytes) }
        }
    }

    /// An ASR result (volatile or final); a later call with the same `resultID` replaces it.
    ///
    /// A result holding text the server cannot store (U+0000 in a word or the id) is dropped here, not
    /// queued: `events` gets a non-fatal `error` `invalid_text` naming it, and an earlier version of the
    /// same `resultID`, if one was sent, stands. The session goes on.
    public func send(words: [SpokenWord], resultID: String, isFinal: Bool) {
        queue.async {
            guard self.outcome == nil else { return }
            if let problem = UnstorableText.problem(resultID: resultID, words: words) {
                self.refuseLocally(problem)
                return
            }
            self.ledger.record(resultID: resultID, words: words, isFinal: isFinal)
            if let connection = self.connection, connection.live, let origin = self.origin {
                connection.socket.send(text: self.wordsMessage(resultID: resultID, words: words, isFinal: isFinal, origin: origin))
            }
        }
    }

    /// Speaker turns the device computed (provider `device`). A batch with a speaker key the server
    /// cannot store (U+0000) is dropped with an `invalid_text` event, as for words.
    public func send(segments: [SpeakerSyncSegment]) {
        queue.async {
            guard self.outcome == nil, !segments.isEmpty else { return }
            if let problem = UnstorableText.problem(fields: segments.map { ("segment speaker", $0.speaker) }) {
                self.refuseLocally(problem)
                return
            }
            self.ledger.record(segments)
            if let connection = self.connection, connection.live, let origin = self.origin {
                connection.socket.send(text: self.segmentsMessage(segments, origin: origin))
            }
        }
    }

    /// Names a speaker (a NUL in either is refused with an `invalid_text` event, as for words).
    public func renameSpeaker(_ label: String, to name: String) {
        control(encoder.encode(.renameSpeaker(speaker: label, name: name)), fields: [("speaker", label), ("name", name)])
    }

    public func mergeSpeakers(_ from: String, into: String) {
        control(encoder.encode(.mergeSpeakers(from: from, into: into)), fields: [("from", from), ("into", into)])
    }

    /// Finalizes once everything given so far is sent (reconnecting as often as it takes), and returns
    /// how the session ended. `timeoutSeconds` bounds the wait, after which the session stops.
    public func finish(timeoutSeconds: Double = 120) async -> SessionOutcome {
        let timeout = DispatchWorkItem { [weak self] in
            guard let self else { return }
            self.queue.async { self.end(.stopped(closeCode: self._lastCloseCode, reason: "finalize timed out after \(Int(timeoutSeconds)) s")) }
        }
        queue.asyncAfter(deadline: .now() + timeoutSeconds, execute: timeout)
        let result = await withCheckedContinuation { (waiter: CheckedContinuation<SessionOutcome, Never>) in
            queue.async {
                if let outcome = self.outcome { waiter.resume(returning: outcome); return }
                self.waiters.append(waiter)
                self.finishRequested = true
                if let connection = self.connection, connection.live, !connection.finalizeSent { self.sendFinalize(connection) }
            }
        }
        timeout.cancel()
        return result
    }

    /// Ends without finalize: the connection closes (1001) and nothing is resent (the server keeps what
    /// it stored; the conversation stays resumable by a new session with the same id).
    public func stop() {
        queue.async {
            self.stopRequested = true
            self.connection?.socket.close(code: 1001, reason: "going away")
            if self.connection == nil { self.end(.stopped(closeCode: self._lastCloseCode, reason: "stopped by the app")) }
        }
    }

    /// Waits until the session has ended (finalized, refused or stopped).
    public func outcome() async -> SessionOutcome {
        await withCheckedContinuation { waiter in
            queue.async {
                if let outcome = self.outcome { waiter.resume(returning: outcome) } else { self.waiters.append(waiter) }
            }
        }
    }

    /// Bytes queued on the current connection (0 when there is none): pace sending on it.
    public var queuedBytes: Int { queue.sync { connection?.socket.queuedBytes ?? 0 } }

    /// The transcript as the server last described it.
    public var transcript: LiveTranscript { queue.sync { liveTranscript } }

    public var connectionState: ConnectionState { queue.sync { state } }

    /// True while a connection is streaming (the server has started or resumed the conversation).
    public var isLive: Bool { queue.sync { connection?.live == true } }

    /// True once the session has ended (finalized, refused or stopped).
    public var isEnded: Bool { queue.sync { outcome != nil } }

    /// How many `session` messages arrived (1 + the resumes).
    public var sessionCount: Int { queue.sync { sessionsStarted } }

    /// How many connections the session has opened (attempts, successful or not).
    public var connectionAttempts: Int { queue.sync { connectionSerial } }

    /// Seconds of audio given to this session so far (the session's own timeline): where the next
    /// sample lies, e.g. the start of a recognition task about to hear it (`speechRecognizerFeed()`).
    /// Read after the sends on the same thread, it counts them all (they are queued in order).
    public var audioSecondsGiven: Double { queue.sync { Double(audio.totalSamples) / Double(config.sampleRate) } }

    /// Audio the retention had to drop (seconds): what a very long outage could not keep.
    public var droppedAudioSeconds: Double { queue.sync { Double(audio.droppedSamples) / Double(config.sampleRate) } }

    private func control(_ text: String, fields: [(name: String, value: String?)]) {
        queue.async {
            guard self.outcome == nil else { return }
            if let problem = UnstorableText.problem(fields: fields) {
                self.refuseLocally(problem)
                return
            }
            if let connection = self.connection, connection.live { connection.socket.send(text: text) } else { self.pendingControls.append(text) }
        }
    }

    // MARK: Connections (queue)

    private func connect() {
        guard outcome == nil, connection == nil, !stopRequested else { return }
        connectionSerial += 1
        let serial = connectionSerial
        var headers: [(String, String)] = []
        if let token = config.token { headers.append(("authorization", "Bearer \(token)")) }
        do {
            let socket = try sockets.connect(url: config.url, headers: headers) { [weak self] event in
                guard let self else { return }
                self.queue.async { self.handle(event, serial: serial) }
            }
            let connection = Connection(serial: serial, socket: socket)
            let timer = DispatchWorkItem { [weak self, weak connection] in
                guard let self, let connection, !connection.live, self.connection === connection else { return }
                self.logger.info("no session within the open timeout; retrying", metadata: ["seconds": "\(self.config.openTimeoutSeconds)"])
                connection.socket.close(code: 1001, reason: "open timeout")
                self.dropped(connection, code: nil, reason: "the server did not start a session within \(Self.seconds(self.config.openTimeoutSeconds))")
            }
            connection.openTimer = timer
            queue.asyncAfter(deadline: .now() + config.openTimeoutSeconds, execute: timer)
            self.connection = connection
        } catch {
            // A URL that cannot be parsed will not parse on the next attempt either.
            end(.refused(ConnectionFailure(message: "\(error)")))
        }
    }

    /// What the server would refuse with `invalid_text` is refused here, before it is queued.
    private func refuseLocally(_ problem: String) {
        let message = problem + UnstorableText.consequence
        logger.warning("refused text the server cannot store", metadata: ["problem": "\(problem)"])
        continuation.yield(.error(code: "invalid_text", message: message, fatal: false))
    }

    /// No session started within `config.startTimeoutSeconds` of `start()`.
    private func startTimedOut() {
        guard outcome == nil, sessionsStarted == 0, let limit = config.startTimeoutSeconds else { return }
        let attempts = connectionSerial == 1 ? "1 attempt" : "\(connectionSerial) attempts"
        let last = lastDropReason.map { "; last: \($0)" } ?? (connection != nil ? "; the server has not answered" : "")
        logger.info("no session within the start timeout; giving up", metadata: ["seconds": "\(limit)", "attempts": "\(connectionSerial)"])
        end(.stopped(closeCode: _lastCloseCode, reason: "no session within \(Self.seconds(limit)) of starting (\(attempts)\(last))"))
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    private func handle(_ event: SessionSocketEvent, serial: Int) {
        guard let connection, connection.serial == serial else { return }
        switch event {
        case .opened:
            connection.socket.send(text: startMessage())
        case .text(let text):
            onMessage?(text)
            received(text, on: connection)
        case .closed(let code, let reason):
            dropped(connection, code: code, reason: reason)
        case .upgradeRefused(let status, let retryAfter, let reason):
            dropped(connection, code: nil, reason: reason, httpStatus: status,
                    retryAfterSeconds: retryAfter.flatMap { RetryAfter.seconds($0) })
        }
    }

    private func startMessage() -> String {
        var start = StartParameters(
            conversationID: config.conversationID, deviceID: config.deviceID, provider: config.provider,
            sampleRate: config.sampleRate, encoding: config.format, language: config.language,
            optionsJSON: config.optionsJSON, asr: config.asr.flatMap(ASRMode.init(rawValue:)),
            shadowProviders: config.shadowProviders.isEmpty ? nil : config.shadowProviders,
            shadowOptionsJSON: config.shadowOptionsJSON.isEmpty ? nil : config.shadowOptionsJSON,
            storeAudio: config.storeAudio ? true : nil)
        if let forced = forcedOffsetSeconds {
            start.audioOffsetSeconds = forced
        } else if origin == nil, let offset = config.audioOffsetSeconds {
            start.audioOffsetSeconds = offset
        }
        return encoder.encodeStart(start)
    }

    private func received(_ text: String, on connection: Connection) {
        // What this kit cannot read (a newer server's message type) is not for it.
        guard let message = try? decoder.decode(text) else { return }
        switch message {
        case .session(let info):
            began(info, on: connection)
        case .transcript(let update):
            let upserted = liveTranscript.apply(update)
            if let origin {
                for word in upserted.flatMap(\.words) where word.stored {
                    ledger.confirm(text: word.text, startSeconds: word.startSeconds - origin)
                }
                if ledger.resultCount > 256 { ledger.compact() }
            }
            continuation.yield(.transcript(upserted: upserted, removed: update.removed, isFinal: update.isFinal))
        case .speakers(let speakers):
            liveTranscript.apply(message)
            continuation.yield(.speakers(speakers))
        case .error(let error):
            if error.fatal {
                lastError = (error.codeName, error.message)
                connection.fatalError = (error.codeName, error.message)
            }
            continuation.yield(.error(code: error.codeName, message: error.message, fatal: error.fatal))
        default:
            // `stats` goes to the app as its text, as it always has; a message this kit has no event
            // for, decoded (so a message added to the protocol reaches apps with no change here).
            if case .stats = message { continuation.yield(.stats(text)) } else { continuation.yield(.message(message)) }
        }
    }

    /// The server started (or resumed) the conversation: send everything it may be missing.
    private func began(_ info: SessionInfo, on connection: Connection) {
        connection.openTimer?.cancel()
        let offset = info.audioOffsetSeconds
        if origin == nil { origin = offset }
        let origin = self.origin!
        let rate = Double(config.sampleRate)
        let serverSample = max(0, Int64(((offset - origin) * rate).rounded()))
        let (firstSample, frames) = audio.frames(from: serverSample)
        if firstSample > serverSample, audio.totalSamples > serverSample, forcedOffsetSeconds == nil {
            // The retention no longer holds where the server's audio ends: start again with the first
            // sample it does hold at its true place on the timeline, leaving the dropped audio a gap.
            forcedOffsetSeconds = origin + Double(firstSample) / rate
            logger.warning("audio beyond the retention was lost; resuming after the gap",
                           metadata: ["gap_seconds": "\(Double(firstSample - serverSample) / rate)"])
            connection.socket.close(code: 1000, reason: "resume after a gap")
            return
        }
        forcedOffsetSeconds = nil
        audio.release(before: serverSample) // the server has stored everything before it
        connection.live = true
        attempt = 0
        sessionsStarted += 1
        startTimer?.cancel()
        for frame in frames { connection.socket.send(binary: frame.bytes) }
        let resumeSeconds = offset - origin
        let segments = ledger.segmentsToResend(resumingAt: resumeSeconds)
        if !segments.isEmpty { connection.socket.send(text: segmentsMessage(segments, origin: origin)) }
        for result in ledger.undelivered {
            connection.socket.send(text: wordsMessage(resultID: result.resultID, words: result.words, isFinal: result.isFinal, origin: origin))
        }
        for control in pendingControls { connection.socket.send(text: control) }
        pendingControls = []
        setState(.connected(conversationID: info.conversationID))
        continuation.yield(.started(conversationID: info.conversationID, resumed: info.resumed, audioOffsetSeconds: offset))
        if finishRequested { sendFinalize(connection) }
    }

    private func sendFinalize(_ connection: Connection) {
        connection.finalizeSent = true
        connection.socket.send(text: encoder.encode(.finalize))
    }

    /// A connection ended: done, refused for good (`FailureClassification`), or to be resumed after a backoff.
    private func dropped(_ connection: Connection, code: UInt16?, reason: String?, httpStatus: Int? = nil,
                         retryAfterSeconds: Double? = nil) {
        guard self.connection === connection else { return }
        connection.openTimer?.cancel()
        self.connection = nil
        _lastCloseCode = code
        if connection.finalizeSent, code == 1000 { end(.finalized); return }
        if stopRequested { end(.stopped(closeCode: code, reason: reason ?? "stopped by the app")); return }
        if forcedOffsetSeconds != nil, code == 1000 { connect(); return } // our own close, to resume after a gap
        let failure = ConnectionFailure(
            httpStatus: httpStatus, closeCode: code, errorCode: connection.fatalError?.code,
            message: connection.fatalError?.message ?? reason.flatMap { $0.isEmpty ? nil : $0 } ?? code.map { "closed with \($0)" } ?? "connection lost",
            retryAfterSeconds: retryAfterSeconds)
        lastDropReason = failure.description
        guard case .retryable(let notBefore) = FailureClassification(failure) else {
            logger.info("refused; not retrying", metadata: ["failure": "\(failure)"])
            end(.refused(failure))
            return
        }
        attempt += 1
        guard let backoff = config.reconnect.delay(attempt: attempt, unit: Double.random(in: 0..<1)) else {
            end(.stopped(closeCode: code, reason: reason ?? lastError.map { "\($0.code): \($0.message)" } ?? "connection lost"))
            return
        }
        // The server's Retry-After is a floor under the backoff: coming back sooner would be refused again.
        let delay = max(backoff, notBefore ?? 0)
        let why = httpStatus.map { _ in failure.description } ?? reason ?? code.map { "closed with \($0)" } ?? "connection lost"
        setState(connection.live ? .resuming(attempt: attempt) : .offline(retryInSeconds: delay, attempt: attempt, reason: why))
        logger.info("connection lost; reconnecting", metadata: ["attempt": "\(attempt)", "delay_seconds": "\(delay)", "reason": "\(why)"])
        let work = DispatchWorkItem { [weak self] in self?.connect() }
        reconnectWork = work
        queue.asyncAfter(deadline: .now() + delay, execute: work)
    }

    private func end(_ result: SessionOutcome) {
        guard outcome == nil else { return }
        outcome = result
        reconnectWork?.cancel()
        startTimer?.cancel()
        connection?.openTimer?.cancel()
        connection?.socket.close(code: 1001, reason: "session ended")
        connection = nil
        setState(.finished(result))
        audio.spool?.removeAll()
        continuation.finish()
        let waiting = waiters
        waiters = []
        for waiter in waiting { waiter.resume(returning: result) }
    }

    private func setState(_ new: ConnectionState) {
        guard new != state else { return }
        state = new
        continuation.yield(.state(new))
    }

    // MARK: Messages

    /// Times given on the session's own timeline go out on the conversation's: shifted by `origin`.
    private func wordsMessage(resultID: String, words: [SpokenWord], isFinal: Bool, origin: Double) -> String {
        let shifted = words.map { SpokenWord(text: $0.text, startSeconds: $0.startSeconds + origin, endSeconds: $0.endSeconds + origin,
                                             confidence: $0.confidence) }
        return encoder.encode(.words(WordsMessage(resultID: Self.wireResultID(resultID, origin: origin), isFinal: isFinal, words: shifted)))
    }

    /// A result id names a result within the whole conversation, and a later result with the same id
    /// replaces its words on the server. The adapters count ids from this session's own start
    /// (`r<ms>`), so a new session resuming a conversation an earlier one began (the app relaunched)
    /// would send "r0" again and replace that session's stored words. Ids of a session whose audio
    /// starts later on the conversation's timeline therefore carry where it starts; a session from 0
    /// (a new conversation, and every reconnect of the same session object, whose origin is fixed)
    /// keeps them as given.
    static func wireResultID(_ resultID: String, origin: Double) -> String {
        origin == 0 ? resultID : "@\(Int64((origin * 1000).rounded()))/\(resultID)"
    }

    private func segmentsMessage(_ segments: [SpeakerSyncSegment], origin: Double) -> String {
        encoder.encode(.segments(segments.map {
            SpeakerSyncSegment(speaker: $0.speaker, startSeconds: $0.startSeconds + origin, endSeconds: $0.endSeconds + origin,
                               confidence: $0.confidence)
        }))
    }
}
