import Foundation
import Logging
import MeetingSynth
import SpeakerSyncClient
import SpeakerSyncKit
import Synchronization
import TranscriptMerge
import WebSocketTransport

/// A meeting with exact words, as the devices of a fault run stream it.
public struct FaultMeeting: Sendable {
    public var audio: [Float]
    public var sampleRate: Int
    public var words: [DeviceWord]
    public var segments: [SpeakerSyncSegment]

    /// Synthesised with espeak-ng and Festival voices (MeetingSynth): exact word times.
    public static func synthesize(seed: UInt64, speakers: Int = 3, turns: Int = 12) throws -> FaultMeeting {
        let script = try MeetingScript.generate(seed: seed, speakerCount: speakers, turnCount: turns)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: seed)
        return FaultMeeting(
            audio: meeting.audio, sampleRate: meeting.sampleRate,
            words: meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) },
            segments: meeting.turns.map { SpeakerSyncSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) })
    }

    /// Every seed's meeting, synthesised on a Dispatch thread: synthesis blocks on espeak-ng and
    /// Festival for seconds, and a run's caller is a task on Swift concurrency's cooperative pool (one
    /// thread per core), whose threads every other task of the process needs meanwhile.
    public static func synthesize(seeds: [UInt64]) async throws -> [FaultMeeting] {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try seeds.map { try synthesize(seed: $0) } })
            }
        }
    }

    var wordKeys: [AcknowledgementLedger.WordKey] { words.map { .init(text: $0.text, startSeconds: $0.startSeconds) } }
}

/// How one device of the run behaves.
public struct FaultDevicePlan: Sendable {
    public enum Kind: String, Sendable {
        /// SpeakerSyncKit (through `DeviceStreamer`): reconnects, resumes, resends what was not stored.
        case kit
        /// A raw protocol client: sends everything without waiting for `session`, and on a drop
        /// simply stops (it resends nothing, so only what it was told is stored may be counted on).
        case raw
    }

    public var name: String
    public var kind: Kind
    public var provider: String
    public var shadowProviders: [String] = []
    public var storeAudio = false

    public init(name: String, kind: Kind, provider: String, shadowProviders: [String] = [], storeAudio: Bool = false) {
        self.name = name
        self.kind = kind
        self.provider = provider
        self.shadowProviders = shadowProviders
        self.storeAudio = storeAudio
    }
}

/// The devices' results, shared by the tasks that stream them.
final class FaultResults: Sendable {
    private let list = Mutex<[FaultDeviceResult]>([])

    func append(_ result: FaultDeviceResult) { list.withLock { $0.append(result) } }

    var all: [FaultDeviceResult] { list.withLock { $0 } }
}

/// How one meeting of one device ended.
public struct FaultDeviceResult: Sendable {
    public var device: String
    public var kind: FaultDevicePlan.Kind
    public var conversationID: String
    public var finalized: Bool
    public var detail: String
    public var storeAudio: Bool
    /// The server started the session (sent `session`) at least once.
    public var started = true
}

/// What a device of a fault run does, as it happens: the fleet harness times takeovers with it.
public enum FaultDeviceEvent: Sendable {
    /// A meeting began, as a new conversation.
    case began(device: String, conversationID: String)
    /// A SpeakerSyncKit device's connection changed state.
    case state(device: String, conversationID: String, ConnectionState)
    /// A server message (JSON text) reached a SpeakerSyncKit device.
    case message(device: String, conversationID: String, text: String)
}

/// Streams meetings as the devices of a fault run, recording every acknowledgement in the ledger.
struct FaultDevices: Sendable {
    let url: String
    let ledger: AcknowledgementLedger
    let logger: Logger
    let speed: Double
    /// Told what the devices do (nil: nobody listens; the single-server run).
    var observer: (@Sendable (FaultDeviceEvent) -> Void)? = nil

    /// One meeting through SpeakerSyncKit, resuming across every fault until it is finalized.
    func runKit(_ plan: FaultDevicePlan, token: String, meeting: FaultMeeting, client: WebSocketClient) async -> FaultDeviceResult {
        let conversationID = "\(plan.name)-\(UUID().uuidString.prefix(8).lowercased())"
        var config = DeviceStreamConfig(url: url, provider: plan.provider, deviceID: plan.name)
        config.token = token
        config.conversationID = conversationID
        config.speed = speed
        config.shadowProviders = plan.shadowProviders
        config.storeAudio = plan.storeAudio
        config.volatileResults = true
        config.finalizeTimeoutSeconds = 600
        config.startTimeoutSeconds = 600
        config.reconnect = ReconnectPolicy(initialDelaySeconds: 0.2, maxDelaySeconds: 2, maxAttempts: nil)
        let ledger = self.ledger
        if let observer {
            let device = plan.name
            observer(.began(device: device, conversationID: conversationID))
            config.onMessage = {
                ledger.observe(conversationID, message: $0)
                observer(.message(device: device, conversationID: conversationID, text: $0))
            }
            config.onState = { observer(.state(device: device, conversationID: conversationID, $0)) }
        } else {
            config.onMessage = { ledger.observe(conversationID, message: $0) }
        }
        ledger.sent(conversationID, meeting.wordKeys, kit: true)
        let streamer = DeviceStreamer(client: client, config: config, logger: logger)
        do {
            let report = try await streamer.stream(audio: meeting.audio, sampleRate: meeting.sampleRate, words: meeting.words,
                                                   segments: plan.provider == "device" ? meeting.segments : [])
            var finalized = false
            if case .finalized? = report.outcome { finalized = true }
            if finalized { ledger.finalizedClose(conversationID, sent: Set(meeting.wordKeys)) }
            return FaultDeviceResult(device: plan.name, kind: .kit, conversationID: conversationID, finalized: finalized,
                                     detail: finalized ? "\(report.sessionCount) session(s)"
                                        : "\(report.sessionCount) session(s), outcome \(String(describing: report.outcome)), close \(report.closeCode.map(String.init) ?? "none"), errors \(report.errors.suffix(3).map { "\($0.code): \($0.message)" })",
                                     storeAudio: plan.storeAudio)
        } catch {
            return FaultDeviceResult(device: plan.name, kind: .kit, conversationID: conversationID, finalized: false,
                                     detail: "\(error)", storeAudio: plan.storeAudio)
        }
    }

    /// One meeting as a raw client: one connection, everything sent at the device's pace without
    /// waiting for `session`, then finalize; whatever a fault does to it, it resends nothing.
    func runRaw(_ plan: FaultDevicePlan, token: String, meeting: FaultMeeting, client: WebSocketClient,
                hostile: Bool = false) async -> FaultDeviceResult {
        let conversationID = "\(plan.name)-\(UUID().uuidString.prefix(8).lowercased())"
        let failed = { (detail: String) in
            FaultDeviceResult(device: plan.name, kind: .raw, conversationID: conversationID, finalized: false, detail: detail,
                              storeAudio: plan.storeAudio, started: false)
        }
        observer?(.began(device: plan.name, conversationID: conversationID))
        guard let connection = try? client.connect(url: url, headers: [("authorization", "Bearer \(token)")]) else {
            return failed("could not connect")
        }
        let ledger = self.ledger
        let closed = Mutex<UInt16??>(nil)
        let started = Atomic<Bool>(false)
        let reader = Task {
            for await event in connection.events {
                switch event {
                case .message(.text(let text)):
                    if text.hasPrefix(#"{"type":"session""#) { started.store(true, ordering: .relaxed) }
                    ledger.observe(conversationID, message: text)
                case .disconnected(let code, _):
                    closed.withLock { $0 = .some(code) }
                    return
                default: continue
                }
            }
        }
        // A raw device writes its messages itself, but with the protocol's encoder: only the hostile ones
        // below are written by hand, since no encoder writes a lone surrogate.
        let encoder = ClientMessageEncoder()
        connection.send(.text(encoder.encodeStart(StartParameters(
            conversationID: conversationID, deviceID: plan.name, provider: plan.provider, sampleRate: meeting.sampleRate,
            encoding: .pcmS16LE, storeAudio: plan.storeAudio ? true : nil))))
        if hostile {
            // At once, so the refusal is seen whatever fault comes next: a lone surrogate and a NUL.
            connection.send(.text(#"{"type":"words","result_id":"hostile0","final":true,"words":[{"text":"ok\ud800","start":0.0,"end":0.1},{"text":"a\u0000b","start":0.1,"end":0.2}]}"#))
        }
        var sent: [AcknowledgementLedger.WordKey] = []
        let chunk = meeting.sampleRate / 10
        let began = ContinuousClock.now
        var nextWord = 0
        var nextSegment = 0
        let words = meeting.words.sorted { $0.endSeconds < $1.endSeconds }
        let segments = meeting.segments.sorted { $0.endSeconds < $1.endSeconds }
        var offset = 0
        while offset < meeting.audio.count, closed.withLock({ $0 }) == nil {
            let end = min(meeting.audio.count, offset + chunk)
            connection.send(.binary(PCMEncoding.encode(Array(meeting.audio[offset..<end]), as: .pcmS16LE)))
            offset = end
            let seconds = Double(offset) / Double(meeting.sampleRate)
            if plan.provider == "device" {
                var batch: [DeviceSegment] = []
                while nextSegment < segments.count, segments[nextSegment].endSeconds <= seconds {
                    let segment = segments[nextSegment]
                    batch.append(DeviceSegment(speaker: segment.speaker, startSeconds: segment.startSeconds, endSeconds: segment.endSeconds))
                    nextSegment += 1
                }
                if !batch.isEmpty { connection.send(.text(encoder.encode(.segments(batch)))) }
            }
            var ready: [DeviceWord] = []
            while nextWord < words.count, words[nextWord].endSeconds <= seconds {
                ready.append(words[nextWord])
                nextWord += 1
            }
            if !ready.isEmpty {
                let resultID = "raw\(nextWord)"
                // Without the ASR confidence: a raw device sends text and times only.
                var items = ready.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
                if hostile, nextWord % 3 == 0 {
                    // Text PostgreSQL cannot hold: the whole message must be refused, nothing of it acknowledged.
                    items[0].text = "bad\u{0}word"
                    connection.send(.text(encoder.encode(.words(WordsMessage(resultID: resultID, isFinal: true, words: items)))))
                } else {
                    sent += ready.map { .init(text: $0.text, startSeconds: $0.startSeconds) }
                    ledger.sent(conversationID, ready.map { .init(text: $0.text, startSeconds: $0.startSeconds) }, kit: false)
                    connection.send(.text(encoder.encode(.words(WordsMessage(resultID: resultID, isFinal: true, words: items)))))
                }
            }
            try? await Task.sleep(until: began + .seconds(seconds / speed), clock: .continuous)
        }
        connection.send(.text(encoder.encode(.finalize)))
        // Bounded: a server that never answers leaves the device waiting at most this long.
        let deadline = ContinuousClock.now + .seconds(120)
        while closed.withLock({ $0 }) == nil, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        connection.close(code: 1000, reason: "done")
        reader.cancel()
        let code = closed.withLock { $0 } ?? nil
        if code == 1000 { ledger.finalizedClose(conversationID, sent: Set(sent)) }
        return FaultDeviceResult(device: plan.name, kind: .raw, conversationID: conversationID, finalized: code == 1000,
                                 detail: "closed \(code.map(String.init) ?? "without a close frame")", storeAudio: plan.storeAudio,
                                 started: started.load(ordering: .relaxed))
    }
}

extension FaultDevices {
    /// One device streaming meetings back to back, a new conversation each time, until `done` is set.
    /// A device that could not even start (the server restarting) tries again a moment later, as a
    /// person would, rather than in a tight loop.
    func streamMeetings(_ plan: FaultDevicePlan, token: String, meetings: [FaultMeeting], firstRound: Int,
                        client: WebSocketClient, into results: FaultResults, until done: RunFlag) async {
        var round = firstRound
        repeat {
            let meeting = meetings[round % meetings.count]
            let result = plan.kind == .kit
                ? await runKit(plan, token: token, meeting: meeting, client: client)
                : await runRaw(plan, token: token, meeting: meeting, client: client)
            results.append(result)
            round += 1
            if !result.started { try? await Task.sleep(for: .seconds(1)) }
        } while !done.isSet
    }
}
