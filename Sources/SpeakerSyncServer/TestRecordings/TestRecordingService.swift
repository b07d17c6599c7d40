import Dispatch
import Foundation
import Logging
import MeetingSynth
import SpeakerSyncEval
import SpeakerSyncStore
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
///
/// Each recording is a `jobs` row (kind `test_recording`) holding its report, so every server answers
/// for it and a stop never makes it vanish. It is this server's from the start rather than queued for
/// any server: the caller's credential lives only in this server's memory (it is never stored), so
/// no other server could stream it, and a recording cut off by a stop is failed, not resumed.
final class TestRecordingService: Sendable {
    struct Endpoint: Sendable {
        /// `ws://127.0.0.1:PORT` or `wss://…`.
        var url: String
        /// For TLS: the server's own certificate, trusted for the loopback connection.
        var caFilePath: String?
    }

    private let queue: JobQueue
    /// The recordings running on this server, each written through to its row as it changes.
    private let running = Mutex<[String: TestRecordingReport]>([:])
    /// Admission (the limit, this server's stray rows, the insert) one request at a time.
    private let admission = Mutex(Admission())
    private let endpoint = Mutex<Endpoint?>(nil)
    private let logger: Logger
    private let synthQueue = DispatchQueue(label: "speakersync.test-recordings", attributes: .concurrent)

    private struct Admission {
        var stopping = false
    }

    /// Recordings running at once on all servers; more get 429 (each one is a session and a synthesis).
    static let maxRunning = 2
    /// The newest recordings `GET /v1/test-recordings` lists.
    static let listLimit = 50
    /// Why a recording running here is failed when the server stops.
    static let shutdownReason = "interrupted by a server shutdown"

    init(queue: JobQueue, logger: Logger) {
        self.queue = queue
        self.logger = logger
    }

    /// Set once the transport listens.
    func bind(_ endpoint: Endpoint) {
        self.endpoint.withLock { $0 = endpoint }
    }

    /// Starts `request` in the background; the report to poll.
    /// `perDeviceLimit`: the device's share (`JobShareConfig`); nil for the admin's requests.
    func start(_ request: TestRecordingRequest, credential: String?, perDeviceLimit: Int? = nil) throws(APIError) -> [String: Any] {
        guard let endpoint = endpoint.withLock({ $0 }) else {
            throw APIError(status: 503, code: "server_starting", message: "the server is still starting")
        }
        let id = JobIDs.make()
        let report = TestRecordingReport(id: id, request: request)
        let record = JobRecord(id: id, kind: .testRecording, deviceID: request.deviceID, conversationID: nil,
                               provider: request.providers.joined(separator: ","), requestJSON: Self.json(request.jsonObject),
                               resultJSON: Self.json(report.jsonObject()))
        let admitted = try admission.withLock { admission throws(APIError) -> JobQueue.Admission in
            guard !admission.stopping else {
                throw APIError(status: 503, code: "server_stopping", message: "the server is stopping; retry once it is back")
            }
            do {
                // A row marked running here that runs nowhere (its insert's answer was lost with the
                // connection) would hold a place for good.
                let here = running.withLock { Array($0.keys) }
                try queue.failRunning(kind: .testRecording, reason: "lost by its server", keeping: here)
                running.withLock { $0[id] = report }
                let inserted = try queue.admit(record, limit: Self.maxRunning, perDeviceLimit: perDeviceLimit, startRunning: true)
                if inserted.record == nil { running.withLock { _ = $0.removeValue(forKey: id) } }
                return inserted
            } catch {
                running.withLock { _ = $0.removeValue(forKey: id) }
                logger.warning("test recording not stored", metadata: ["error": "\(error)"])
                throw APIError(status: 503, code: "storage_unavailable", message: "the test recording cannot be stored; retry later")
            }
        }
        let started: JobRecord
        switch admitted {
        case .added(let added): started = added
        case .full:
            throw APIError(status: 429, code: "test_recording_busy",
                           message: "\(Self.maxRunning) test recordings are already running; retry when one is done")
        case .deviceShareUsed:
            throw APIError(status: 429, code: "device_share_used",
                           message: "device \(request.deviceID) already has \(perDeviceLimit ?? 0) test recording(s) running (its share, serve --max-test-recordings-per-device); retry when one is done")
        }
        synthQueue.async { self.run(id: id, request: request, endpoint: endpoint, credential: credential) }
        return TestRecordingReport.jsonObject(of: started)
    }

    /// The recordings `principal` may see (a device token: its own device's), newest first.
    func list(visibleTo principal: Principal) throws -> [[String: Any]] {
        try queue.jobs(kind: .testRecording, deviceID: principal.deviceID, limit: Self.listLimit).map(TestRecordingReport.jsonObject(of:))
    }

    func report(id: String, visibleTo principal: Principal) throws -> [String: Any]? {
        try queue.job(id: id, kind: .testRecording, deviceID: principal.deviceID).map(TestRecordingReport.jsonObject(of:))
    }

    /// Changes this server's copy of a running report and writes it to the row. A recording that is no
    /// longer this server's (failed at shutdown, or by recovery elsewhere) is forgotten here.
    private func update(_ id: String, _ change: (inout TestRecordingReport) -> Void) {
        guard let report = running.withLock({ running -> TestRecordingReport? in
            guard var report = running[id] else { return nil }
            change(&report)
            running[id] = report
            return report
        }) else { return }
        let finished = report.results.filter { $0.phase == .done || $0.phase == .failed }.count
        let progress = report.results.isEmpty ? 0 : Double(finished) / Double(report.results.count)
        do {
            let json = Self.json(report.jsonObject())
            let stillOurs: Bool
            switch report.phase {
            case .synthesising, .streaming:
                stillOurs = try queue.heartbeat(id: id, progress: progress, resultJSON: json)
            case .done:
                stillOurs = try queue.finish(id: id, resultJSON: json)
            case .failed:
                let reason = report.error ?? report.results.compactMap(\.error).first.map { "every provider failed: \($0)" } ?? "every provider failed"
                stillOurs = try queue.finish(id: id, failureReason: reason, resultJSON: json)
            }
            if !stillOurs || report.isFinished { running.withLock { _ = $0.removeValue(forKey: id) } }
        } catch {
            logger.warning("test recording: report not stored", metadata: ["test_recording": "\(id)", "error": "\(error)"])
        }
    }

    /// Stops taking recordings and fails those running here: they cannot be resumed (their caller's
    /// credential is not stored). Call before the listener closes, so their streams' end is not
    /// mistaken for a provider's failure. Idempotent.
    func shutdown() {
        admission.withLock { $0.stopping = true }
        running.withLock { $0.removeAll() }
        do {
            let failed = try queue.failRunning(kind: .testRecording, reason: Self.shutdownReason)
            if !failed.isEmpty { logger.info("test recordings interrupted by the shutdown", metadata: ["test_recordings": "\(failed)"]) }
        } catch {
            logger.warning("test recordings not marked failed at shutdown; the next server to start does it", metadata: ["error": "\(error)"])
        }
    }

    static func json(_ object: [String: Any]) -> String {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
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
                // Failed by a stop (here or, by recovery, elsewhere): stream nothing more.
                guard running.withLock({ $0[id] != nil }) else { return }
                var config = EvalConfig(serverURL: endpoint.url, provider: provider, speed: request.speed)
                config.caFilePath = endpoint.caFilePath
                config.token = credential
                config.deviceID = request.deviceID
                config.warmUp = false
                // Kept so the console can play the meeting and re-diarize it with other providers.
                config.storeAudio = true
                config.memoryPollSeconds = 2
                var run = recording
                run.conversationID = running.withLock { $0[id]?.results[index].conversationID }
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
