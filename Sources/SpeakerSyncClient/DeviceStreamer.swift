import Foundation
import Logging
import Synchronization
import WebSocketTransport

/// How `DeviceStreamer` behaves like a device.
public struct DeviceStreamConfig: Sendable {
    /// `ws://HOST:PORT/v1/listen`, or `wss://` for a TLS server.
    public var url: String
    /// For wss://: PEM certificates trusted instead of the system store (a self-signed server's
    /// certificate). Used by `DeviceStreamer.makeClient`; a client made elsewhere has its own.
    public var caFilePath: String?
    public var provider: String
    /// The start's device_id; empty omits it (a device token's server then uses the token's device).
    public var deviceID: String
    public var conversationID: String?
    /// Audio per binary frame.
    public var chunkSeconds: Double
    /// Multiple of real time at which to send; nil sends as fast as the server accepts.
    public var speed: Double?
    /// With `speed`: send each chunk at the first tick of this clock (a grid shared by every streamer
    /// of the process) at or after its due time, instead of at its own instant. One device needs none
    /// (nil). A load generator playing hundreds of devices on the server's own cores does: each
    /// session waking on its own instant cost it 5,000 timer wake-ups a second at 500 sessions, and
    /// 40 % of its samples in the kernel's task switching (docs/benchmarks.md). Sessions due in the same
    /// tick then wake together, and the server gets their chunks in bursts, which is no easier for it.
    public var pacingTickSeconds: Double?
    /// The start message's `options` object, as JSON text.
    public var optionsJSON: String?
    /// The start's `asr`: nil/"device" (the words given to `stream` are sent), or "server" (the server
    /// recognises the audio; give no words).
    public var asr: String?
    /// The start's `shadow_providers` (stored for comparison, never sent back).
    public var shadowProviders: [String] = []
    /// The start's `shadow_options` (provider id → options JSON object text).
    public var shadowOptionsJSON: [String: String] = [:]
    /// The start's `store_audio`.
    public var storeAudio = false
    /// Send each ASR result first as volatile, then final, as SpeechAnalyzer does.
    public var volatileResults: Bool
    /// Where the audio starts on the conversation timeline when resuming (nil: the server decides).
    public var audioOffsetSeconds: Double?
    /// Give up waiting for the final transcript after this long.
    public var finalizeTimeoutSeconds: Double
    /// Finish with `finalize` (true) or drop the connection after the audio (false: tests reconnects).
    public var sendFinalize: Bool
    /// The device token (or admin key), sent as `Authorization: Bearer` on the upgrade.
    public var token: String?
    /// What to do when the connection drops: `.never` (one connection; tests of a single session) or
    /// reconnect and resume (`speakersync stream`, `eval`, `demo`: they survive a server restart).
    public var reconnect: ReconnectPolicy
    /// How long to keep trying to start the session at all (the server may be restarting): with
    /// reconnects, the session ends with an error when no `session` came within this long of starting,
    /// whatever the retries are doing (SpeakerSyncKit's `startTimeoutSeconds`).
    public var startTimeoutSeconds: Double
    /// Told every connection state change (connected, resuming, offline, finished), in order.
    public var onState: (@Sendable (ConnectionState) -> Void)?
    /// Told every server message (JSON text) as it arrives, across reconnects: what a tool that keeps
    /// its own record (the fault harness's acknowledgement ledger) needs even when the stream fails.
    public var onMessage: (@Sendable (String) -> Void)?
    /// How `stream(audio:…)` sends the recording: 16-bit PCM (the default) or Opus packets encoded
    /// here (the recording's rate must then be 8, 12, 16, 24 or 48 kHz).
    public var encoding: DeviceAudioEncoding
    /// The Opus encoder's bitrate (a wearable's speech setting).
    public var opusBitsPerSecond: Int
    /// Retained audio on disk instead of memory (SpeakerSyncKit's spool), for long offline stretches.
    public var spoolDirectory: URL?

    public init(url: String, provider: String = "device", deviceID: String = "speakersync-cli") {
        self.url = url
        self.provider = provider
        self.deviceID = deviceID
        self.conversationID = nil
        self.chunkSeconds = 0.1
        self.speed = nil
        self.optionsJSON = nil
        self.asr = nil
        self.volatileResults = false
        self.audioOffsetSeconds = nil
        self.finalizeTimeoutSeconds = 120
        self.sendFinalize = true
        self.token = nil
        self.caFilePath = nil
        self.reconnect = .never
        self.startTimeoutSeconds = 300
        self.onState = nil
        self.onMessage = nil
        self.encoding = .pcmS16LE
        self.opusBitsPerSecond = 24_000
        self.spoolDirectory = nil
    }
}

/// What a streamed session produced, as the device saw it.
public struct StreamReport: Sendable {
    public var conversationID: String
    public var transcript: LiveTranscript
    public var errors: [(code: String, message: String)]
    public var closeCode: UInt16?
    /// Seconds from sending a `words` message to the first transcript update carrying each of its words.
    public var wordUpdateLatencies: [Double]
    /// When each of those words was sent, in seconds since the stream began (same order).
    public var wordUpdateSentSeconds: [Double]
    /// Every server message (JSON text) in arrival order with its arrival time (seconds since the stream began).
    public var messages: [(seconds: Double, text: String)]
    /// The server's `session` message (JSON text).
    public var sessionMessage: String
    /// The server's `stats` message (JSON text), sent at finalize.
    public var statsMessage: String?
    /// Connections that started a session (1, plus one per resume after a drop).
    public var sessionCount = 1
    /// How the session ended (nil when it had not ended when the report was made).
    public var outcome: SessionOutcome?
    /// Seconds from asking the server to finalize (after the last audio) to the session's end: what
    /// the user waits for the final labels. Nil when the stream did not ask (`sendFinalize` off).
    public var finalizeSeconds: Double?
}

public struct DeviceStreamError: Error, CustomStringConvertible, Sendable {
    public var description: String
    /// How the session ended, when the error is that it ended without finalizing.
    public var outcome: SessionOutcome?
    public init(_ description: String, outcome: SessionOutcome? = nil) {
        self.description = description
        self.outcome = outcome
    }

    /// One line for a session that ended without finalizing; `serverErrors` are the `error` messages
    /// it received ("code: message; …").
    static func describing(_ outcome: SessionOutcome, serverErrors: String) -> DeviceStreamError {
        let text = switch outcome {
        case .refused(let failure):
            "the session was refused: \(failure)"
        case .stopped(let code, let reason):
            "the session stopped\(code.map { " (close code \($0))" } ?? ""): \(reason)"
                + (serverErrors.isEmpty ? "" : " (server errors: \(serverErrors))")
        case .finalized:
            "the session was finalized"
        }
        return DeviceStreamError(text, outcome: outcome)
    }
}

/// Streams a recording to SpeakerSync exactly as a phone would: a start message, audio in small
/// binary frames (16-bit PCM at the recording's rate), each ASR result once its audio has been sent
/// (plus the recogniser's delay), device segments as they end, then finalize; and keeps the live
/// transcript the server pushes back.
public final class DeviceStreamer: Sendable {
    private let client: WebSocketClient
    private let config: DeviceStreamConfig
    private let logger: Logger

    /// A client that can reach `config.url`: wss:// servers are verified against `config.caFilePath`
    /// (else the system store).
    public static func makeClient(for config: DeviceStreamConfig, logger: Logger) throws -> WebSocketClient {
        try WebSocketClient(caFilePath: config.caFilePath, tls: config.url.hasPrefix("wss://"), logger: logger)
    }

    public init(client: WebSocketClient, config: DeviceStreamConfig, logger: Logger) {
        self.client = client
        self.config = config
        self.logger = logger
    }

    public func stream(audio: [Float], sampleRate: Int, words: [DeviceWord], segments: [DeviceSegment] = []) async throws -> StreamReport {
        let messages = switch config.encoding {
        case .pcmS16LE:
            AudioMessages.pcm(audio, sampleRate: sampleRate, chunkSamples: Int(config.chunkSeconds * Double(sampleRate)))
        case .opus:
            try AudioMessages.opus(audio, sampleRate: sampleRate, bitsPerSecond: config.opusBitsPerSecond)
        }
        return try await stream(messages, words: words, segments: segments)
    }

    /// Streams audio already cut into messages (e.g. an Ogg Opus file's packets); `config.encoding`
    /// is not used, the messages say their encoding.
    public func stream(_ audio: AudioMessages, words: [DeviceWord], segments: [DeviceSegment] = []) async throws -> StreamReport {
        let sampleRate = audio.sampleRate
        let inbox = StreamInbox()
        var kit = SpeakerSyncSessionConfig(url: config.url, token: config.token, deviceID: config.deviceID.isEmpty ? nil : config.deviceID,
                                           provider: config.provider, sampleRate: sampleRate,
                                           format: audio.encoding == .opus ? .opus : .pcmS16LE,
                                           conversationID: config.conversationID ?? UUID().uuidString.lowercased())
        kit.spoolDirectory = config.spoolDirectory
        kit.optionsJSON = config.optionsJSON
        kit.asr = config.asr
        kit.shadowProviders = config.shadowProviders
        kit.shadowOptionsJSON = config.shadowOptionsJSON
        kit.storeAudio = config.storeAudio
        kit.audioOffsetSeconds = config.audioOffsetSeconds
        kit.reconnect = config.reconnect
        let reconnects = config.reconnect.maxAttempts != 0
        // With reconnects the kit itself bounds the wait for the first session; with one connection
        // `waitStarted` below does.
        kit.startTimeoutSeconds = reconnects ? config.startTimeoutSeconds : nil
        let onMessage = config.onMessage
        let session = SpeakerSyncSession(config: kit, sockets: LWSSocketFactory(client: client), logger: logger) { text in
            inbox.receivedText(text)
            onMessage?(text)
        }
        let began = ContinuousClock.now
        if let onState = config.onState {
            Task {
                for await event in session.events { if case .state(let state) = event { onState(state) } }
            }
        }
        session.start()
        // One connection only: wait for it, so a refused start is an error right away. With
        // reconnects the device records on while the server is unreachable (the kit keeps it all).
        if !reconnects { try await waitStarted(session, inbox: inbox) }

        // Times given on the conversation timeline; the session counts from its own first sample.
        let offsetSeconds = config.audioOffsetSeconds ?? 0
        func relative(_ word: DeviceWord) -> SpokenWord {
            SpokenWord(text: word.text, startSeconds: word.startSeconds - offsetSeconds, endSeconds: word.endSeconds - offsetSeconds,
                       confidence: word.confidence)
        }
        let results = DeviceInput.results(from: words, volatile: config.volatileResults)
        let sortedSegments = segments.sorted { $0.endSeconds < $1.endSeconds }
        var nextResult = 0
        var nextSegment = 0
        var nextMessage = 0
        var offset = 0
        while nextMessage < audio.messages.count || nextResult < results.count || nextSegment < sortedSegments.count {
            if session.isEnded { break }
            if nextMessage < audio.messages.count {
                let message = audio.messages[nextMessage]
                session.send(pcm: message.bytes, sampleCount: message.endSample - offset)
                offset = message.endSample
                nextMessage += 1
            }
            let sentSeconds = nextMessage >= audio.messages.count ? Double.infinity : Double(offset) / Double(sampleRate)
            var batch: [SpeakerSyncSegment] = []
            while nextSegment < sortedSegments.count, sortedSegments[nextSegment].endSeconds - offsetSeconds <= sentSeconds {
                var segment = sortedSegments[nextSegment]
                segment.startSeconds -= offsetSeconds
                segment.endSeconds -= offsetSeconds
                batch.append(segment)
                nextSegment += 1
            }
            session.send(segments: batch)
            while nextResult < results.count, results[nextResult].availableAtSeconds - offsetSeconds <= sentSeconds {
                let result = results[nextResult]
                inbox.noteSent(words: result.words)
                session.send(words: result.words.map(relative), resultID: result.resultID, isFinal: result.isFinal)
                nextResult += 1
            }
            if let speed = config.speed, speed > 0, nextMessage < audio.messages.count {
                let due = began + .seconds(Double(offset) / Double(sampleRate) / speed)
                try await Task.sleep(until: PacingGrid.tick(atOrAfter: due, tickSeconds: config.pacingTickSeconds), clock: .continuous)
            } else {
                // As fast as the server accepts: let the transport drain before queueing more.
                // Not while offline either: a file streamed as fast as possible would otherwise go into
                // the kit's retention all at once (a live device instead records on, see `speed`).
                while session.queuedBytes > 1 << 20 || (reconnects && !session.isLive), !session.isEnded {
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
        }

        var finalizeSeconds: Double?
        if config.sendFinalize {
            let stopped = ContinuousClock.now
            _ = await session.finish(timeoutSeconds: config.finalizeTimeoutSeconds)
            finalizeSeconds = (ContinuousClock.now - stopped).seconds
        } else {
            // Let pending updates arrive, then drop the connection the way a lost network would.
            try await Task.sleep(for: .milliseconds(300))
            session.stop()
            _ = await session.outcome()
        }
        if reconnects, case .finished(let outcome) = session.connectionState, outcome != .finalized,
           inbox.sessionStarted == false || config.sendFinalize {
            throw DeviceStreamError.describing(outcome, serverErrors: inbox.errorSummary)
        }
        var report = inbox.report(conversationID: config.conversationID ?? kit.conversationID, began: began)
        report.closeCode = session.lastCloseCode
        report.sessionCount = session.sessionCount
        report.finalizeSeconds = finalizeSeconds
        if case .finished(let outcome) = session.connectionState { report.outcome = outcome }
        return report
    }

    /// Waits for the first `session` message, or the reason there will be none.
    private func waitStarted(_ session: SpeakerSyncSession, inbox: StreamInbox) async throws {
        let deadline = ContinuousClock.now + .seconds(config.reconnect.maxAttempts == 0 ? 60 : config.startTimeoutSeconds)
        while true {
            // Checked once more after the deadline: a task starved past it (a busy machine) must not
            // call a session that started meanwhile (on the session's own threads) a timeout.
            let pastDeadline = ContinuousClock.now >= deadline
            switch session.connectionState {
            case .connected:
                return
            case .finished(.finalized):
                return
            case .finished(let outcome):
                var error = DeviceStreamError.describing(outcome, serverErrors: inbox.errorSummary)
                if config.url.hasPrefix("wss://"), Self.neverConnected(outcome) {
                    // lws reports a refused certificate only as "connect SSL err 1" (its log line has the reason).
                    let hint = config.caFilePath.map { "the CA file \($0) must hold the certificate that issued the server's" }
                        ?? "a self-signed server needs its certificate as the CA file (--ca-file)"
                    error.description += " (TLS: the certificate must be trusted and name this host; \(hint))"
                }
                throw error
            default:
                if pastDeadline {
                    session.stop()
                    throw DeviceStreamError("timed out waiting for the session to start")
                }
                try await Task.sleep(for: .milliseconds(2))
            }
        }
    }
}

extension DeviceStreamer {
    /// Whether the outcome is a connection that never got as far as a close frame or an HTTP answer
    /// (where a TLS failure shows).
    static func neverConnected(_ outcome: SessionOutcome) -> Bool {
        switch outcome {
        case .refused(let failure): failure.httpStatus == nil && failure.closeCode == nil && failure.errorCode == nil
        case .stopped(let code, _): code == nil
        case .finalized: false
        }
    }
}

/// Collects what the server sends, across reconnects, for the report; fed from the session's queue.
final class StreamInbox: Sendable {
    private struct State {
        var session: String?
        var stats: String?
        var transcript = LiveTranscript()
        var errors: [(code: String, message: String)] = []
        var messages: [(seconds: Double, text: String)] = []
        var sentAt: [String: ContinuousClock.Instant] = [:]
        var latencies: [Double] = []
        var latencySentAt: [Double] = []
    }

    private let state = Mutex(State())
    private let began = ContinuousClock.now

    func receivedText(_ text: String) {
        let now = ContinuousClock.now
        // The session's closing stats (tens of KB of per-chunk and per-word figures) are kept as text,
        // not parsed here, so that parsing them does not hold up other sessions' transcript updates
        // (and inflate their measured latency).
        if text.hasPrefix(#"{"type":"stats""#) {
            state.withLock { state in
                state.messages.append(((now - began).seconds, text))
                state.stats = text
            }
            return
        }
        guard let message = try? ServerMessageDecoder().decode(text) else { return }
        state.withLock { state in
            state.messages.append(((now - began).seconds, text))
            switch message {
            case .session: state.session = state.session ?? text
            case .stats: state.stats = text
            case .error(let error): state.errors.append((error.codeName, error.message))
            default:
                // Transcripts and speakers change the transcript; a message added later passes through.
                for word in state.transcript.apply(message) {
                    if let sent = state.sentAt.removeValue(forKey: Self.key(word.text, word.startSeconds)) {
                        state.latencies.append((now - sent).seconds)
                        state.latencySentAt.append((sent - began).seconds)
                    }
                }
            }
        }
    }

    func noteSent(words: [DeviceWord]) {
        let now = ContinuousClock.now
        state.withLock { state in
            for word in words where state.sentAt[Self.key(word.text, word.startSeconds)] == nil {
                state.sentAt[Self.key(word.text, word.startSeconds)] = now
            }
        }
    }

    static func key(_ text: String, _ start: Double) -> String {
        "\(text)|\(Int((start * 1000).rounded()))"
    }

    var sessionStarted: Bool { state.withLock { $0.session != nil } }

    var errorSummary: String {
        state.withLock { $0.errors.map { "\($0.code): \($0.message)" }.joined(separator: "; ") }
    }

    func report(conversationID: String, began: ContinuousClock.Instant) -> StreamReport {
        state.withLock { state in
            StreamReport(
                conversationID: conversationID, transcript: state.transcript, errors: state.errors,
                closeCode: nil, wordUpdateLatencies: state.latencies,
                wordUpdateSentSeconds: state.latencySentAt, messages: state.messages,
                sessionMessage: state.session ?? "", statsMessage: state.stats
            )
        }
    }
}

extension Duration {
    /// This duration in seconds as a Double.
    public var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
