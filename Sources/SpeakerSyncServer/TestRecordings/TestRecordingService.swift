import DiarizationScoring
import Dispatch
import Foundation
import Logging
import SessionProtocol
import SpeakerSyncStore
import Synchronization

/// Runs the console's test recordings: synthesises a meeting with exact truth (espeak-ng, as
/// `speakersync synth` does), streams it through each chosen provider as a device would, and scores
/// each provider's result against the truth (`SessionScore`, as `speakersync eval` does).
///
/// The device lives in this process (`InProcessDevice`): it opens a real session through
/// `SessionManager` and talks to it over a `LoopbackSessionTransport` instead of a socket. The
/// figures are still the ones a device gets (the session's protocol messages, backpressure, the
/// provider worker, the store), and the sessions show up among the live sessions like any other.
/// They act as the principal that asked (a device token: only as its device), pass the handshake's
/// checks for it (credential still live, its rate, the device's connections) and close when its
/// credential is revoked, so a test recording can do no more than its caller could; no credential
/// travels or is kept.
///
/// Each recording is a `jobs` row (kind `test_recording`) holding its report, so every server answers
/// for it and a stop never makes it vanish. It is this server's from the start rather than queued for
/// any server: its sessions run in this process, and a recording cut off by a stop is failed, not
/// resumed.
final class TestRecordingService: Sendable {
    private let queue: JobQueue
    /// The recordings running on this server, each written through to its row as it changes.
    private let running = Mutex<[String: TestRecordingReport]>([:])
    /// Admission (the limit, this server's stray rows, the insert) one request at a time.
    private let admission = Mutex(Admission())
    /// Where the recordings' sessions are opened; set once the server is up.
    private let sessions = Mutex<SessionManager?>(nil)
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

    /// Set once the transport listens (before, a request is answered `server_starting`).
    func bind(_ sessions: SessionManager) {
        self.sessions.withLock { $0 = sessions }
    }

    /// Starts `request` in the background, its sessions acting as `principal` (who asked, from
    /// `address`); the report to poll. `upload`: the recording of an upload (`request.upload`), held
    /// in memory until it has streamed. `perDeviceLimit`: the device's share (`JobShareConfig`); nil
    /// for the admin's requests.
    func start(_ request: TestRecordingRequest, upload: UploadedRecording? = nil, principal: Principal, address: String?,
               perDeviceLimit: Int? = nil) throws(APIError) -> [String: Any] {
        guard let sessions = sessions.withLock({ $0 }) else {
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
        let device = InProcessDevice(config: InProcessDeviceConfig(speed: request.speed), sessions: sessions, principal: principal,
                                     address: address, logger: logger)
        synthQueue.async { self.run(id: id, request: request, upload: upload, device: device) }
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
            case .synthesising, .preparing, .streaming:
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

    /// Stops taking recordings and fails those running here: they cannot be resumed (their sessions
    /// ran in this process). Call before the sessions stop, so their end is not mistaken for a
    /// provider's failure. Idempotent.
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

    private func run(id: String, request: TestRecordingRequest, upload: UploadedRecording?, device: InProcessDevice) {
        var logger = self.logger
        logger[metadataKey: "test_recording"] = "\(id)"
        let meeting: TestMeeting
        do {
            // An upload was checked when it arrived; a synthetic meeting is made now.
            meeting = try upload.map { $0.meeting(recordingID: id) } ?? TestMeeting.synthesise(request, recordingID: id)
        } catch {
            logger.error("test recording: synthesis failed", metadata: ["error": "\(error)"])
            update(id) { $0.phase = .failed; $0.error = "synthesis_failed: \(error)" }
            return
        }
        update(id) { report in
            report.phase = .streaming
            report.audioSeconds = meeting.audioSeconds
            report.truth = meeting.reference
            // An upload's words are not known beforehand (the server recognises them, or there are none).
            report.truthWordCount = upload == nil ? meeting.words.count : nil
        }
        Task.detached { [self] in
            for (index, provider) in request.providers.enumerated() {
                // Failed by a stop (here or, by recovery, elsewhere): stream nothing more.
                guard let conversationID = running.withLock({ $0[id]?.results[index].conversationID }) else { return }
                update(id) { $0.results[index].phase = .streaming }
                // An upload has no device words: the server recognises them when asked, as for the microphone.
                var start = StartRequest(conversationID: conversationID, deviceID: request.deviceID, provider: provider,
                                         sampleRate: meeting.audio.sampleRate, encoding: .pcmS16LE,
                                         asr: request.upload?.serverWords == true ? .server : .device)
                // Kept so the console can play the meeting and re-diarize it with other providers.
                start.storeAudio = true
                // Provider `device` gets the device's own turns: the truth, as `speakersync eval` sends them.
                let segments = provider == "device"
                    ? meeting.reference.map { DeviceSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
                    : []
                do {
                    let streamed = try await device.stream(meeting, start: start, segments: segments)
                    let scored = Self.score(streamed, against: meeting, isUpload: upload != nil)
                    update(id) { report in
                        report.results[index].phase = .done
                        report.results[index].score = scored?.score
                        report.results[index].errors = scored?.errors ?? []
                        report.results[index].wordsScored = scored?.wordsScored ?? false
                        report.results[index].wordCount = streamed.words.count
                        report.results[index].unlabelledWordCount = streamed.words.filter { $0.speaker == nil }.count
                        report.results[index].stats = streamed.stats
                        report.results[index].sessionErrors = streamed.errors.map { "\($0.code.rawValue): \($0.message)" }
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

    /// A provider's run against the meeting's truth (`SessionScore`, as `speakersync eval` scores) and
    /// where its final turns go wrong; nil for an upload without a reference. An upload's words are
    /// the ones the server recognised: their reference speakers are the RTTM's at each word (the
    /// midpoint rule `speakersync eval` uses for a recording without word truth).
    static func score(_ run: InProcessDeviceRun, against meeting: TestMeeting, isUpload: Bool)
        -> (score: SessionScore, errors: [ErrorRegion], wordsScored: Bool)? {
        guard !meeting.reference.isEmpty else { return nil }
        let hypothesisWords = run.words.map {
            ScoredWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, speaker: $0.speaker)
        }
        let referenceWords = isUpload
            ? ReferenceWordLabels.label(hypothesisWords.map { (text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) },
                                        reference: meeting.reference)
            : meeting.referenceWords
        let finalTurns = run.stats.finalTurns.map(TestRecordingReport.segment)
        let score = SessionScore(reference: meeting.reference, uem: meeting.uem, referenceWords: referenceWords,
                                 hypothesisWords: hypothesisWords, liveTurns: run.stats.liveTurns.map(TestRecordingReport.segment),
                                 finalTurns: finalTurns)
        let errors = ErrorRegions.compute(reference: meeting.reference, hypothesis: finalTurns, uem: meeting.uem,
                                          mapping: score.finalDER.mapping)
        return (score, errors, !referenceWords.isEmpty)
    }
}
