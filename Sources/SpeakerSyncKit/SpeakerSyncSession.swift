import Dispatch
import Foundation
import Logging

/// One conversation streamed to SpeakerSync that survives drops: the app gives audio, ASR results,
/// device segments and speaker edits whenever it has them; the session sends them while connected,
/// keeps them while not, and after any disconnect reconnects (backoff with jitter), resumes the
/// conversation where the server's stored audio ends, and sends again whatever the server may not have
/// stored: the audio from there on, every result not yet echoed back `stored`, the segments after it.
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
    public func start() {
        queue.async { self.connect() }
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
    public func send(words: [SpokenWord], resultID: String, isFinal: Bool) {
        queue.async {
            guard self.outcome == nil else { return }
            self.ledger.record(resultID: resultID, words: words, isFinal: isFinal)
            if let connection = self.connection, connection.live, let origin = self.origin {
                connection.socket.send(text: Self.wordsMessage(resultID: resultID, words: words, isFinal: isFinal, origin: origin))
            }
        }
    }

    /// Speaker turns the device computed (provider `device`).
    public func send(segments: [SpeakerSyncSegment]) {
        queue.async {
            guard self.outcome == nil, !segments.isEmpty else { return }
            self.ledger.record(segments)
            if let connection = self.connection, connection.live, let origin = self.origin {
                connection.socket.send(text: Self.segmentsMessage(segments, origin: origin))
            }
        }
    }

    public func renameSpeaker(_ label: String, to name: String) {
        control(Self.json(["type": "rename_speaker", "speaker": label, "name": name]))
    }

    public func mergeSpeakers(_ from: String, into: String) {
        control(Self.json(["type": "merge_speakers", "from": from, "into": into]))
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

    /// Audio the retention had to drop (seconds): what a very long outage could not keep.
    public var droppedAudioSeconds: Double { queue.sync { Double(audio.droppedSamples) / Double(config.sampleRate) } }

    private func control(_ text: String) {
        queue.async {
            guard self.outcome == nil else { return }
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
                self.dropped(connection, code: nil, reason: "no session within \(self.config.openTimeoutSeconds) s")
            }
            connection.openTimer = timer
            queue.asyncAfter(deadline: .now() + config.openTimeoutSeconds, execute: timer)
            self.connection = connection
        } catch {
            // A URL that cannot be parsed will not parse on the next attempt either.
            end(.refused(closeCode: nil, code: nil, message: "\(error)"))
        }
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
        }
    }

    private func startMessage() -> String {
        var start: [String: Any] = [
            "type": "start", "conversation_id": config.conversationID, "provider": config.provider,
            "sample_rate": config.sampleRate, "encoding": config.format.rawValue,
        ]
        if let deviceID = config.deviceID { start["device_id"] = deviceID }
        if let language = config.language { start["language"] = language }
        if let asr = config.asr { start["asr"] = asr }
        if !config.shadowProviders.isEmpty { start["shadow_providers"] = config.shadowProviders }
        if config.storeAudio { start["store_audio"] = true }
        if !config.shadowOptionsJSON.isEmpty {
            start["shadow_options"] = config.shadowOptionsJSON.compactMapValues { try? JSONSerialization.jsonObject(with: Data($0.utf8)) }
        }
        if let options = config.optionsJSON, let object = try? JSONSerialization.jsonObject(with: Data(options.utf8)) {
            start["options"] = object
        }
        if let forced = forcedOffsetSeconds {
            start["audio_offset_seconds"] = forced
        } else if origin == nil, let offset = config.audioOffsetSeconds {
            start["audio_offset_seconds"] = offset
        }
        return Self.json(start)
    }

    private func received(_ text: String, on connection: Connection) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { return }
        switch object["type"] as? String {
        case "session":
            began(object, on: connection)
        case "transcript":
            let upserted = liveTranscript.applyTranscript(object)
            if let origin {
                for word in upserted.flatMap(\.words) where word.stored {
                    ledger.confirm(text: word.text, startSeconds: word.startSeconds - origin)
                }
                if ledger.resultCount > 256 { ledger.compact() }
            }
            continuation.yield(.transcript(upserted: upserted, removed: object["removed"] as? [String] ?? [],
                                           isFinal: object["final"] as? Bool == true))
        case "speakers":
            liveTranscript.apply(object)
            let speakers = (object["speakers"] as? [[String: Any]] ?? []).compactMap { item -> SpeakerInfo? in
                guard let label = item["label"] as? String else { return nil }
                return SpeakerInfo(label: label, name: item["name"] as? String ?? label, mergedInto: item["merged_into"] as? String)
            }
            continuation.yield(.speakers(speakers))
        case "error":
            let code = object["code"] as? String ?? "unknown"
            let message = object["message"] as? String ?? ""
            let fatal = object["fatal"] as? Bool == true
            if fatal { lastError = (code, message) }
            continuation.yield(.error(code: code, message: message, fatal: fatal))
        case "stats":
            continuation.yield(.stats(text))
        default:
            break
        }
    }

    /// The server started (or resumed) the conversation: send everything it may be missing.
    private func began(_ object: [String: Any], on connection: Connection) {
        connection.openTimer?.cancel()
        let offset = (object["audio_offset_seconds"] as? NSNumber)?.doubleValue ?? 0
        let resumed = object["resumed"] as? Bool == true
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
        for frame in frames { connection.socket.send(binary: frame.bytes) }
        let resumeSeconds = offset - origin
        let segments = ledger.segments(endingAfter: resumeSeconds)
        if !segments.isEmpty { connection.socket.send(text: Self.segmentsMessage(segments, origin: origin)) }
        for result in ledger.undelivered {
            connection.socket.send(text: Self.wordsMessage(resultID: result.resultID, words: result.words, isFinal: result.isFinal, origin: origin))
        }
        for control in pendingControls { connection.socket.send(text: control) }
        pendingControls = []
        let conversationID = object["conversation_id"] as? String ?? config.conversationID
        setState(.connected(conversationID: conversationID))
        continuation.yield(.started(conversationID: conversationID, resumed: resumed, audioOffsetSeconds: offset))
        if finishRequested { sendFinalize(connection) }
    }

    private func sendFinalize(_ connection: Connection) {
        connection.finalizeSent = true
        connection.socket.send(text: Self.json(["type": "finalize"]))
    }

    /// A connection ended: done, refused for good, or to be resumed after a backoff.
    private func dropped(_ connection: Connection, code: UInt16?, reason: String?) {
        guard self.connection === connection else { return }
        connection.openTimer?.cancel()
        self.connection = nil
        _lastCloseCode = code
        if connection.finalizeSent, code == 1000 { end(.finalized); return }
        if stopRequested { end(.stopped(closeCode: code, reason: reason ?? "stopped by the app")); return }
        if forcedOffsetSeconds != nil, code == 1000 { connect(); return } // our own close, to resume after a gap
        if Self.isRefusal(code: code, reason: reason, wasLive: connection.live) {
            end(.refused(closeCode: code, code: lastError?.code, message: lastError?.message ?? reason ?? "refused"))
            return
        }
        attempt += 1
        guard let delay = config.reconnect.delay(attempt: attempt, unit: Double.random(in: 0..<1)) else {
            end(.stopped(closeCode: code, reason: reason ?? lastError.map { "\($0.code): \($0.message)" } ?? "connection lost"))
            return
        }
        let why = reason ?? code.map { "closed with \($0)" } ?? "connection lost"
        setState(connection.live ? .resuming(attempt: attempt) : .offline(retryInSeconds: delay, attempt: attempt, reason: why))
        logger.info("connection lost; reconnecting", metadata: ["attempt": "\(attempt)", "delay_seconds": "\(delay)", "reason": "\(why)"])
        let work = DispatchWorkItem { [weak self] in self?.connect() }
        reconnectWork = work
        queue.asyncAfter(deadline: .now() + delay, execute: work)
    }

    /// Close codes and handshake failures that retrying cannot fix (docs/protocol.md, docs/security.md):
    /// a start the server cannot take, an unknown provider or another device, an oversized frame, a
    /// revoked credential; and an upgrade refused as unauthorized.
    static func isRefusal(code: UInt16?, reason: String?, wasLive: Bool) -> Bool {
        if let code, [1003, 1007, 1008, 1009, 4003].contains(code) { return true }
        if code == nil, !wasLive, let reason = reason?.lowercased(), reason.contains("unauthorized") || reason.contains("403") { return true }
        return false
    }

    private func end(_ result: SessionOutcome) {
        guard outcome == nil else { return }
        outcome = result
        reconnectWork?.cancel()
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

    static func wordsMessage(resultID: String, words: [SpokenWord], isFinal: Bool, origin: Double) -> String {
        json(["type": "words", "result_id": resultID, "final": isFinal, "words": words.map { word -> [String: Any] in
            var item: [String: Any] = ["text": word.text, "start": word.startSeconds + origin, "end": word.endSeconds + origin]
            if let confidence = word.confidence { item["confidence"] = confidence }
            return item
        }])
    }

    static func segmentsMessage(_ segments: [SpeakerSyncSegment], origin: Double) -> String {
        json(["type": "segments", "segments": segments.map {
            ["speaker": $0.speaker, "start": $0.startSeconds + origin, "end": $0.endSeconds + origin] as [String: Any]
        }])
    }

    static func json(_ object: [String: Any]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8), as: UTF8.self)
    }
}
