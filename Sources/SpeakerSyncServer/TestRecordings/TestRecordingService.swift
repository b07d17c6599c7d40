import Dispatch
import Foundation
import Logging
import MeetingSynth
import SpeakerSyncEval
import Synchronization
import WebSocketTransport

/// Runs the console's test recordings: synthesises a meeting with exact truth (espeak-ng, as
/// `speakersync synth` does), streams it through each chosen provider over a loopback WebSocket
/// exactly as a device would (`EvalRunner`, the machinery of `speakersync eval`), and scores each
/// provider's result against the truth.
///
/// Why a loopback connection rather than feeding a session in process: the figures must be the ones a
/// device gets (framing, backpressure, the provider worker, the store), and the sessions then show up
/// among the live sessions like any other. The stream presents the requesting credential, so a test
/// recording can do no more than its caller could.
final class TestRecordingService: Sendable {
    struct Endpoint: Sendable {
        /// `ws://127.0.0.1:PORT` or `wss://…`.
        var url: String
        /// For TLS: the server's own certificate, trusted for the loopback connection.
        var caFilePath: String?
    }

    private let recordings = Mutex<[String: TestRecordingReport]>([:])
    private let order = Mutex<[String]>([])
    private let endpoint = Mutex<Endpoint?>(nil)
    private let logger: Logger
    private let synthQueue = DispatchQueue(label: "speakersync.test-recordings", attributes: .concurrent)

    /// Recordings running at once; more get 429 (each one is a session and a synthesis).
    static let maxRunning = 2
    /// Finished recordings kept for the console; the oldest are dropped first.
    static let maxKept = 50

    init(logger: Logger) {
        self.logger = logger
    }

    /// Set once the transport listens.
    func bind(_ endpoint: Endpoint) {
        self.endpoint.withLock { $0 = endpoint }
    }

    /// Starts `request` in the background; the report to poll.
    func start(_ request: TestRecordingRequest, credential: String?) throws(APIError) -> TestRecordingReport {
        guard let endpoint = endpoint.withLock({ $0 }) else {
            throw APIError(status: 503, code: "server_starting", message: "the server is still starting")
        }
        let id = String(UUID().uuidString.lowercased().prefix(8))
        let report = TestRecordingReport(id: id, request: request)
        let admitted = recordings.withLock { recordings -> Bool in
            guard recordings.values.filter({ !$0.isFinished }).count < Self.maxRunning else { return false }
            recordings[id] = report
            return true
        }
        guard admitted else {
            throw APIError(status: 429, code: "test_recording_busy",
                           message: "\(Self.maxRunning) test recordings are already running; retry when one is done")
        }
        order.withLock { order in
            order.append(id)
            // Forget the oldest finished ones beyond the limit.
            while order.count > Self.maxKept, let oldest = order.first {
                order.removeFirst()
                recordings.withLock { _ = $0.removeValue(forKey: oldest) }
            }
        }
        synthQueue.async { self.run(id: id, request: request, endpoint: endpoint, credential: credential) }
        return report
    }

    /// The recordings `principal` may see (a device token: its own device's), newest first.
    func list(visibleTo principal: Principal) -> [TestRecordingReport] {
        let ids = order.withLock { $0 }
        let all = recordings.withLock { recordings in ids.compactMap { recordings[$0] } }
        return all.filter { principal.deviceID == nil || principal.deviceID == $0.request.deviceID }.reversed()
    }

    func report(id: String, visibleTo principal: Principal) -> TestRecordingReport? {
        guard let report = recordings.withLock({ $0[id] }),
              principal.deviceID == nil || principal.deviceID == report.request.deviceID else { return nil }
        return report
    }

    private func update(_ id: String, _ change: (inout TestRecordingReport) -> Void) {
        recordings.withLock { recordings in
            guard var report = recordings[id] else { return }
            change(&report)
            recordings[id] = report
        }
    }

    // MARK: Running (a synthQueue thread, then a task)

    private func run(id: String, request: TestRecordingRequest, endpoint: Endpoint, credential: String?) {
        var logger = self.logger
        logger[metadataKey: "test_recording"] = "\(id)"
        let recording: EvalRecording
        do {
            recording = try synthesise(id: id, request: request)
        } catch {
            logger.error("test recording: synthesis failed", metadata: ["error": "\(error)"])
            update(id) { $0.phase = .failed; $0.error = "synthesis_failed: \(error)" }
            return
        }
        update(id) { report in
            report.phase = .streaming
            report.audioSeconds = recording.audioSeconds
            report.truth = recording.reference
            report.truthWordCount = recording.words.count
        }
        Task.detached { [self] in
            for (index, provider) in request.providers.enumerated() {
                var config = EvalConfig(serverURL: endpoint.url, provider: provider, speed: request.speed)
                config.caFilePath = endpoint.caFilePath
                config.token = credential
                config.deviceID = request.deviceID
                config.warmUp = false
                // Kept so the console can play the meeting and re-diarize it with other providers.
                config.storeAudio = true
                config.memoryPollSeconds = 2
                var run = recording
                run.conversationID = recordings.withLock { $0[id]?.results[index].conversationID }
                update(id) { $0.results[index].phase = .streaming }
                do {
                    let client = try WebSocketClient(caFilePath: endpoint.caFilePath, tls: endpoint.url.hasPrefix("wss://"), logger: logger)
                    let summary = try await EvalRunner(config: config, client: client, logger: logger).run([run])
                    update(id) { report in
                        report.results[index].phase = .done
                        report.results[index].evaluation = summary.files.first
                    }
                } catch {
                    logger.error("test recording: stream failed", metadata: ["provider": "\(provider)", "error": "\(error)"])
                    update(id) { report in
                        report.results[index].phase = .failed
                        report.results[index].error = "\(error)"
                    }
                }
            }
            update(id) { report in
                report.phase = report.results.allSatisfy { $0.phase == .failed } ? .failed : .done
            }
        }
    }

    /// The meeting and its truth, as `speakersync synth` writes them and `speakersync eval` reads them.
    private func synthesise(id: String, request: TestRecordingRequest) throws -> EvalRecording {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-test-recording-\(id)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = MeetingSetConfig(speakerCount: request.speakerCount, meetingCount: 1, turnCount: request.turnCount,
                                      seed: request.seed, namePrefix: "test-\(id)")
        try MeetingSet.write(config, to: directory)
        let spec = EvalCorpusSpec(
            audioPaths: [directory.path], rttmPaths: [directory.appendingPathComponent("reference.rttm").path],
            uemPaths: [directory.appendingPathComponent("reference.uem").path],
            wordsDirectory: directory.appendingPathComponent("words").path)
        guard let recording = try EvalCorpus.load(spec).first else {
            throw EvalError(.invalidInput, "the synthesised meeting could not be read back")
        }
        return recording
    }
}
