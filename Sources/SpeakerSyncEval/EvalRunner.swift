import Foundation
import Logging
import SpeakerSyncAudio
import SpeakerSyncClient
import Synchronization
import WebSocketTransport

/// How `EvalRunner` streams: where, with which provider, how fast, how many sessions at once.
public struct EvalConfig: Sendable {
    /// `ws://HOST:PORT` of a running server (HTTP is on the same port), or `wss://` (then https://).
    public var serverURL: String
    /// For a TLS server: PEM certificates trusted instead of the system store, for /healthz (the
    /// WebSocket client given to `EvalRunner` carries its own).
    public var caFilePath: String?
    public var provider: String
    /// Multiple of real time; nil sends as fast as the server accepts (latency figures then mean little).
    public var speed: Double?
    /// Recordings streamed at once. Memory per session is the server's growth divided by this.
    public var concurrency: Int
    /// The start message's `options` (JSON text), e.g. speaker-count hints.
    public var optionsJSON: String?
    /// Audio per binary frame: a phone's 100 ms buffers.
    public var chunkSeconds: Double
    /// How often the server's resident memory is sampled through /healthz.
    public var memoryPollSeconds: Double
    /// The credential the sessions and the memory probe present (a device token for
    /// `speakersync-eval`, or the admin key); nil for a server with `--auth off`. Only the admin key
    /// (or `--auth off`) sees the server's memory in /healthz: with a device token the memory per
    /// session is not reported.
    public var token: String?
    /// The device the sessions run as (a device token's own device when `token` is one:
    /// `EvalDevice.resolve` finds it).
    public var deviceID: String
    /// Each session must start within this long, whatever its reconnects are doing.
    public var startTimeoutSeconds: Double = 60
    /// Whether a short warm-up session runs first so one-time costs are not charged to the first file;
    /// off for a single file that should leave no conversation but its own (the warm-up is stored too).
    public var warmUp: Bool
    /// The start's `shadow_providers`: providers run beside `provider` on the same audio (stored, not
    /// scored here); what one costs the provider under evaluation is what the figures then show.
    public var shadowProviders: [String] = []
    /// The start's `store_audio` (the recordings' audio is kept, to replay and re-diarize).
    public var storeAudio = false

    public init(serverURL: String, provider: String, speed: Double? = 1, concurrency: Int = 1, optionsJSON: String? = nil) {
        self.serverURL = serverURL
        self.provider = provider
        self.speed = speed
        self.concurrency = concurrency
        self.optionsJSON = optionsJSON
        self.chunkSeconds = 0.1
        self.memoryPollSeconds = 0.1
        self.deviceID = EvalDevice.defaultID
        self.warmUp = true
    }

    var listenURL: String { serverURL + "/v1/listen" }
    var healthURL: String { CredentialIdentity.httpURL(forWebSocketURL: serverURL) + "/healthz" }
}

/// Streams recordings through a SpeakerSync server exactly as a device would (audio in 100 ms frames,
/// ASR results once their audio has been sent plus the recogniser's delay, device turns for provider
/// `device`), then scores the live and final results against the truth.
public final class EvalRunner: Sendable {
    private let config: EvalConfig
    private let client: WebSocketClient
    private let logger: Logger

    public init(config: EvalConfig, client: WebSocketClient, logger: Logger) {
        self.config = config
        self.client = client
        self.logger = logger
    }

    public func run(_ recordings: [EvalRecording], progress: @Sendable (FileEvaluation) -> Void = { _ in }) async throws -> EvalSummary {
        var results: [FileEvaluation] = []
        let width = max(1, config.concurrency)
        // Warm-up: one short session first, so one-time costs of the server process (the provider's
        // lazily touched model pages, BLAS buffers, session threads) are not charged to the first file.
        if config.warmUp, var warmUp = recordings.first {
            let samples = min(warmUp.audio.samples.count, 5 * warmUp.audio.sampleRate)
            warmUp.audio = AudioBuffer(samples: Array(warmUp.audio.samples.prefix(samples)), sampleRate: warmUp.audio.sampleRate)
            warmUp.words = []
            warmUp.deviceSegments = []
            _ = try? await stream(warmUp)
        }
        for batchStart in stride(from: 0, to: recordings.count, by: width) {
            let batch = Array(recordings[batchStart ..< min(recordings.count, batchStart + width)])
            let memory = MemoryWatch(url: config.healthURL, token: config.token, caFilePath: config.caFilePath, interval: config.memoryPollSeconds)
            let baseline = memory.start()
            let streamed = try await withThrowingTaskGroup(of: (Int, StreamReport).self) { group in
                for (index, recording) in batch.enumerated() {
                    group.addTask { (index, try await self.stream(recording)) }
                }
                var reports = [StreamReport?](repeating: nil, count: batch.count)
                for try await (index, report) in group { reports[index] = report }
                return reports.map { $0! }
            }
            let peak = await memory.stop()
            let perSession = baseline.flatMap { base in peak.map { max(0, $0 - base) / batch.count } }
            for (recording, report) in zip(batch, streamed) {
                guard let statsText = report.statsMessage, let stats = SessionStats(statsMessage: statsText) else {
                    let detail = report.errors.map { "\($0.code): \($0.message)" }.joined(separator: "; ")
                    throw EvalError(.streamFailed, "\(recording.id): the server sent no stats (close code \(report.closeCode.map(String.init) ?? "none")) \(detail)")
                }
                let evaluation = FileEvaluation(
                    recording: recording, transcript: report.transcript, stats: stats, memoryPerSessionBytes: perSession,
                    conversationID: report.conversationID, errors: report.errors.map { "\($0.code): \($0.message)" })
                progress(evaluation)
                results.append(evaluation)
            }
        }
        return EvalSummary(provider: config.provider, files: results)
    }

    private func stream(_ recording: EvalRecording) async throws -> StreamReport {
        var streamConfig = DeviceStreamConfig(url: config.listenURL, provider: config.provider, deviceID: config.deviceID)
        streamConfig.token = config.token
        streamConfig.conversationID = recording.conversationID
        streamConfig.reconnect = .default // a recording survives a server restart (SpeakerSyncKit)
        streamConfig.startTimeoutSeconds = config.startTimeoutSeconds
        streamConfig.speed = config.speed
        streamConfig.chunkSeconds = config.chunkSeconds
        streamConfig.optionsJSON = config.optionsJSON
        streamConfig.shadowProviders = config.shadowProviders
        streamConfig.storeAudio = config.storeAudio
        streamConfig.volatileResults = true
        streamConfig.finalizeTimeoutSeconds = 600
        let segments = config.provider == "device" ? recording.deviceSegments : []
        do {
            return try await DeviceStreamer(client: client, config: streamConfig, logger: logger)
                .stream(audio: recording.audio.samples, sampleRate: recording.audio.sampleRate, words: recording.words, segments: segments)
        } catch {
            throw EvalError(.streamFailed, "\(recording.id): \(error)")
        }
    }
}

/// Samples the server's resident memory (`/healthz` → `resident_bytes`) in the background.
final class MemoryWatch: Sendable {
    private let url: String
    private let token: String?
    private let caFilePath: String?
    private let interval: Double
    private let peak = Mutex<Int?>(nil)
    private let running = Atomic<Bool>(false)
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(url: String, token: String?, caFilePath: String?, interval: Double) {
        self.url = url
        self.token = token
        self.caFilePath = caFilePath
        self.interval = interval
    }

    func sample() -> Int? {
        guard let response = try? SimpleHTTPClient.get(url, token: token, timeoutSeconds: 5, caFilePath: caFilePath), response.status == 200,
              let object = response.json() as? [String: Any] else { return nil }
        return (object["resident_bytes"] as? NSNumber)?.intValue
    }

    /// Returns the baseline and starts sampling.
    func start() -> Int? {
        let baseline = sample()
        running.store(true, ordering: .relaxed)
        task.withLock { $0 = Task.detached { [self] in
            while running.load(ordering: .relaxed) {
                if let value = sample() { peak.withLock { $0 = max($0 ?? value, value) } }
                try? await Task.sleep(for: .seconds(interval))
            }
        } }
        return baseline
    }

    /// Stops sampling; returns the peak seen (including one last sample).
    func stop() async -> Int? {
        running.store(false, ordering: .relaxed)
        let running = task.withLock { $0 }
        await running?.value
        if let value = sample() { peak.withLock { $0 = max($0 ?? value, value) } }
        return peak.withLock { $0 }
    }
}
