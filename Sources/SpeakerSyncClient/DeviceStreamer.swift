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
    /// The start message's `options` object, as JSON text.
    public var optionsJSON: String?
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
    /// How `stream(audio:…)` sends the recording: 16-bit PCM (the default) or Opus packets encoded
    /// here (the recording's rate must then be 8, 12, 16, 24 or 48 kHz).
    public var encoding: DeviceAudioEncoding
    /// The Opus encoder's bitrate (a wearable's speech setting).
    public var opusBitsPerSecond: Int

    public init(url: String, provider: String = "device", deviceID: String = "speakersync-cli") {
        self.url = url
        self.provider = provider
        self.deviceID = deviceID
        self.conversationID = nil
        self.chunkSeconds = 0.1
        self.speed = nil
        self.optionsJSON = nil
        self.volatileResults = false
        self.audioOffsetSeconds = nil
        self.finalizeTimeoutSeconds = 120
        self.sendFinalize = true
        self.token = nil
        self.caFilePath = nil
        self.encoding = .pcmS16LE
        self.opusBitsPerSecond = 24_000
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
}

public struct DeviceStreamError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
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
        try WebSocketClient(caFilePath: config.caFilePath, logger: logger)
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
        let connection = try client.connect(url: config.url, headers: config.token.map { [("authorization", "Bearer \($0)")] } ?? [],
                                            handler: inbox)
        let began = ContinuousClock.now
        do {
            try await inbox.waitConnected(timeoutSeconds: 10)
        } catch let error as DeviceStreamError where config.url.hasPrefix("wss://") {
            // lws reports a refused certificate only as "connect SSL err 1" (its log line has the reason).
            let hint = config.caFilePath.map { "the CA file \($0) must hold the certificate that issued the server's" }
                ?? "a self-signed server needs its certificate as the CA file (--ca-file)"
            throw DeviceStreamError("\(error.description) (TLS: the certificate must be trusted and name this host; \(hint))")
        }

        var start: [String: Any] = [
            "type": "start", "provider": config.provider, "sample_rate": sampleRate, "encoding": audio.encoding.rawValue,
        ]
        // Empty: the server takes the device from the device token.
        if !config.deviceID.isEmpty { start["device_id"] = config.deviceID }
        if let id = config.conversationID { start["conversation_id"] = id }
        if let offset = config.audioOffsetSeconds { start["audio_offset_seconds"] = offset }
        if let options = config.optionsJSON,
           let object = try? JSONSerialization.jsonObject(with: Data(options.utf8)) { start["options"] = object }
        client.send(.text(Self.json(start)), to: connection)
        let session = try await inbox.waitSession(timeoutSeconds: 30)
        let sessionObject = (try? JSONSerialization.jsonObject(with: Data(session.utf8))) as? [String: Any]
        guard let conversationID = sessionObject?["conversation_id"] as? String else {
            throw DeviceStreamError("the server did not start a session: \(session)")
        }

        let results = DeviceInput.results(from: words, volatile: config.volatileResults)
        let sortedSegments = segments.sorted { $0.endSeconds < $1.endSeconds }
        var nextResult = 0
        var nextSegment = 0
        var nextMessage = 0
        var offset = 0
        let offsetSeconds = config.audioOffsetSeconds ?? 0
        while nextMessage < audio.messages.count || nextResult < results.count || nextSegment < sortedSegments.count {
            if inbox.isClosed { break }
            if nextMessage < audio.messages.count {
                let message = audio.messages[nextMessage]
                client.send(.binary(message.bytes), to: connection)
                offset = message.endSample
                nextMessage += 1
            }
            let sentSeconds = nextMessage >= audio.messages.count ? Double.infinity : Double(offset) / Double(sampleRate)
            var batch: [DeviceSegment] = []
            while nextSegment < sortedSegments.count, sortedSegments[nextSegment].endSeconds - offsetSeconds <= sentSeconds {
                batch.append(sortedSegments[nextSegment])
                nextSegment += 1
            }
            if !batch.isEmpty {
                let list = batch.map { ["speaker": $0.speaker, "start": $0.startSeconds, "end": $0.endSeconds] as [String: Any] }
                client.send(.text(Self.json(["type": "segments", "segments": list])), to: connection)
            }
            while nextResult < results.count, results[nextResult].availableAtSeconds - offsetSeconds <= sentSeconds {
                let result = results[nextResult]
                let list = result.words.map { word -> [String: Any] in
                    var item: [String: Any] = ["text": word.text, "start": word.startSeconds, "end": word.endSeconds]
                    if let confidence = word.confidence { item["confidence"] = confidence }
                    return item
                }
                inbox.noteSent(words: result.words)
                client.send(.text(Self.json(["type": "words", "result_id": result.resultID, "final": result.isFinal, "words": list])), to: connection)
                nextResult += 1
            }
            if let speed = config.speed, speed > 0, nextMessage < audio.messages.count {
                let due = began + .seconds(Double(offset) / Double(sampleRate) / speed)
                try await Task.sleep(until: due, clock: .continuous)
            } else {
                // As fast as the server accepts: let the transport drain before queueing more.
                while client.queuedBytes(for: connection) > 1 << 20, !inbox.isClosed {
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
        }

        if config.sendFinalize {
            client.send(.text(Self.json(["type": "finalize"])), to: connection)
            _ = try? await inbox.waitClosed(timeoutSeconds: config.finalizeTimeoutSeconds)
        } else {
            // Let pending updates arrive, then drop the connection the way a lost network would.
            try await Task.sleep(for: .milliseconds(300))
            client.close(connection, code: 1001, reason: "going away")
            _ = try? await inbox.waitClosed(timeoutSeconds: 5)
        }
        return inbox.report(conversationID: conversationID, session: session, began: began)
    }

    static func json(_ object: [String: Any]) -> String {
        String(decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
    }

    static func pcm16(_ samples: ArraySlice<Float>) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(samples.count * 2)
        for sample in samples {
            let clipped = max(-1, min(1, sample.isFinite ? sample : 0))
            let value = Int16((clipped * 32767).rounded())
            let bits = UInt16(bitPattern: value)
            bytes.append(UInt8(bits & 0xff))
            bytes.append(UInt8(bits >> 8))
        }
        return bytes
    }
}

/// Collects what the server sends on one connection; the lws client thread writes, the streamer reads.
final class StreamInbox: WebSocketClientHandler, Sendable {
    private struct State {
        var connected = false
        var closed = false
        var closeCode: UInt16?
        var session: String?
        var stats: String?
        var transcript = LiveTranscript()
        var errors: [(code: String, message: String)] = []
        var messages: [(seconds: Double, text: String)] = []
        var sentAt: [String: ContinuousClock.Instant] = [:]
        var latencies: [Double] = []
        var latencySentAt: [Double] = []
        var failure: String?
    }

    private let state = Mutex(State())
    private let began = ContinuousClock.now

    var isClosed: Bool { state.withLock { $0.closed } }

    func connected(_ connection: ConnectionID) {
        state.withLock { $0.connected = true }
    }

    func received(_ connection: ConnectionID, message: WebSocketMessage) {
        guard case .text(let text) = message else { return }
        let now = ContinuousClock.now
        // One thread reads every connection of a client: the session's closing stats (tens of KB of
        // per-chunk and per-word figures) are kept as text, not parsed here, so that parsing them does
        // not hold up other sessions' transcript updates (and inflate their measured latency).
        if text.hasPrefix(#"{"type":"stats""#) {
            state.withLock { state in
                state.messages.append(((now - began).seconds, text))
                state.stats = text
            }
            return
        }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { return }
        state.withLock { state in
            state.messages.append(((now - began).seconds, text))
            switch object["type"] as? String {
            case "session": state.session = text
            case "stats": state.stats = text
            case "error": state.errors.append((object["code"] as? String ?? "?", object["message"] as? String ?? ""))
            default:
                for word in state.transcript.apply(object) {
                    if let sent = state.sentAt.removeValue(forKey: Self.key(word.text, word.startSeconds)) {
                        state.latencies.append((now - sent).seconds)
                        state.latencySentAt.append((sent - began).seconds)
                    }
                }
            }
        }
    }

    func disconnected(_ connection: ConnectionID, code: UInt16?, reason: String?) {
        state.withLock {
            $0.closed = true
            $0.closeCode = code
            if !$0.connected { $0.failure = reason ?? "connection failed" }
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

    func waitConnected(timeoutSeconds: Double) async throws {
        try await poll(timeoutSeconds, what: "connection") { state in
            if let failure = state.failure { throw DeviceStreamError("could not connect: \(failure)") }
            return state.connected ? true : nil
        }
    }

    func waitSession(timeoutSeconds: Double) async throws -> String {
        try await poll(timeoutSeconds, what: "session message") { state in
            if let session = state.session { return session }
            if state.closed {
                let detail = state.errors.map { "\($0.code): \($0.message)" }.joined(separator: "; ")
                throw DeviceStreamError("the server closed the connection (code \(state.closeCode.map(String.init) ?? "none")) \(detail)")
            }
            return nil
        }
    }

    func waitClosed(timeoutSeconds: Double) async throws {
        try await poll(timeoutSeconds, what: "close") { $0.closed ? true : nil }
    }

    private func poll<T>(_ timeoutSeconds: Double, what: String, _ check: (State) throws -> T?) async throws -> T {
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        while true {
            if let value = try state.withLock({ try check($0) }) { return value }
            if ContinuousClock.now > deadline { throw DeviceStreamError("timed out waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    func report(conversationID: String, session: String, began: ContinuousClock.Instant) -> StreamReport {
        state.withLock { state in
            StreamReport(
                conversationID: conversationID, transcript: state.transcript, errors: state.errors,
                closeCode: state.closeCode, wordUpdateLatencies: state.latencies,
                wordUpdateSentSeconds: state.latencySentAt, messages: state.messages,
                sessionMessage: session, statsMessage: state.stats
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
