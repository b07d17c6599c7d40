import DiarizationScoring
import Foundation
import SessionProtocol
import SpeakerSyncStore

/// A test recording as the console polls it: the request, where it is, the truth (a synthetic
/// meeting's, or an upload's RTTM), and one result per provider as each finishes.
struct TestRecordingReport: Sendable {
    /// `synthesising` a meeting or `preparing` an upload, then `streaming` it through the providers.
    enum Phase: String, Sendable { case synthesising, preparing, streaming, done, failed }

    /// One provider's run over the meeting.
    struct ProviderResult: Sendable {
        enum Phase: String, Sendable { case pending, streaming, done, failed }
        var provider: String
        /// Chosen before streaming, so the page can follow the live session.
        var conversationID: String
        var phase: Phase = .pending
        /// The session's figures against the truth, once it finalized (none for an upload without a reference).
        var score: SessionScore?
        /// Where its final turns go wrong against the truth, and its speakers' mapping onto the truth's.
        var errors: [ErrorRegion] = []
        /// Whether `score`'s WDER means anything: the words had reference speakers to be scored against.
        var wordsScored = false
        /// The words the device held at the end, and how many had no speaker.
        var wordCount = 0
        var unlabelledWordCount = 0
        /// What the session measured about itself (its `stats` message).
        var stats: SessionStats?
        /// The session's non-fatal `error` messages ("code: message").
        var sessionErrors: [String] = []
        var error: String?
    }

    let id: String
    let request: TestRecordingRequest
    let createdAt: Date
    var phase: Phase = .synthesising
    var audioSeconds: Double?
    var truth: [SpeakerSegment] = []
    var truthWordCount: Int?
    var results: [ProviderResult]
    var error: String?

    init(id: String, request: TestRecordingRequest, createdAt: Date = Date()) {
        self.id = id
        self.request = request
        self.createdAt = createdAt
        results = request.providers.map { ProviderResult(provider: $0, conversationID: "test-\(id)-\($0)") }
        if request.upload != nil { phase = .preparing }
    }

    var isFinished: Bool { phase == .done || phase == .failed }

    func jsonObject() -> [String: Any] {
        var object: [String: Any] = [
            "id": id, "status": phase.rawValue, "request": request.jsonObject, "created_at": createdAt.formatted(.iso8601),
            "source": request.upload == nil ? "synthetic" : "upload",
            "audio_seconds": audioSeconds.map { LiveSessionSnapshot.rounded($0) } as Any? ?? NSNull(),
            "truth": [
                "speaker_count": Set(truth.map(\.speaker)).count,
                "word_count": truthWordCount as Any? ?? NSNull(),
                "turns": Self.turns(truth),
            ] as [String: Any],
            "results": results.map(Self.result),
        ]
        if let error { object["error"] = error }
        return object
    }

    /// What the routes answer for a recording's row: the report its server last wrote, with the row's
    /// word on what became of it. A recording failed by a stop (its server wrote no more) says so, and
    /// so do its providers that were still waiting or streaming.
    static func jsonObject(of record: JobRecord) -> [String: Any] {
        let stored = record.resultJSON.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        var object = stored ?? [
            "status": Phase.synthesising.rawValue, "results": [[String: Any]](), "audio_seconds": NSNull(),
            "request": (try? JSONSerialization.jsonObject(with: Data(record.requestJSON.utf8))) ?? [:],
        ]
        object["id"] = record.id
        object["created_at"] = record.createdAt.formatted(.iso8601)
        object["attempts"] = record.attempts
        if record.status == .failed {
            let reason = record.failureReason ?? "failed"
            object["status"] = Phase.failed.rawValue
            object["error"] = reason
            object["results"] = (object["results"] as? [[String: Any]] ?? []).map { result in
                guard [ProviderResult.Phase.pending.rawValue, ProviderResult.Phase.streaming.rawValue].contains(result["status"] as? String) else {
                    return result
                }
                var interrupted = result
                interrupted["status"] = ProviderResult.Phase.failed.rawValue
                interrupted["error"] = reason
                return interrupted
            }
        }
        return object
    }

    private static func result(_ result: ProviderResult) -> [String: Any] {
        var object: [String: Any] = ["provider": result.provider, "conversation_id": result.conversationID, "status": result.phase.rawValue]
        if let error = result.error { object["error"] = error }
        guard let stats = result.stats else { return object }
        let round = { (value: Double) in LiveSessionSnapshot.rounded(value, places: 4) }
        object["speakers_found"] = Set(stats.finalTurns.map(\.speaker)).count
        object["word_count"] = result.wordCount
        object["unlabelled_word_count"] = result.unlabelledWordCount
        object["label_latency_seconds"] = LiveSessionSnapshot.summary(stats.firstLabelLatenciesSeconds)
        object["final_label_latency_seconds"] = LiveSessionSnapshot.summary(stats.finalLabelLatenciesSeconds)
        object["chunk_seconds"] = LiveSessionSnapshot.summary(stats.chunkProcessingSeconds)
        object["real_time_factor"] = stats.realTimeFactor.map(round) as Any? ?? NSNull()
        object["turns"] = turns(stats.finalTurns.map(segment))
        if !result.sessionErrors.isEmpty { object["session_errors"] = result.sessionErrors }
        // Without a reference (an upload without RTTM) there is nothing to score against.
        guard let score = result.score else { return object }
        object["der"] = round(score.finalDER.errorRate)
        object["der_collar"] = round(score.finalDERCollar.errorRate)
        object["live_der_collar"] = round(score.liveDERCollar.errorRate)
        object["jer"] = round(score.jer)
        object["wder"] = result.wordsScored ? round(score.wder.errorRate) : NSNull()
        object["speakers_reference"] = score.speakers.referenceCount
        object["speakers_found"] = score.speakers.hypothesisCount
        object["speakers_introduced_live"] = score.numbersKept.introducedCount
        object["speakers_kept_number"] = score.numbersKept.keptCount
        object["der_seconds"] = [
            "reference": round(score.finalDER.referenceSeconds), "missed": round(score.finalDER.missedSeconds),
            "false_alarm": round(score.finalDER.falseAlarmSeconds), "confusion": round(score.finalDER.confusionSeconds),
        ]
        object["speaker_mapping"] = score.finalDER.mapping
        object["errors"] = result.errors.map { region -> [String: Any] in
            ["kind": region.kind.rawValue, "start": LiveSessionSnapshot.rounded(region.startSeconds),
             "end": LiveSessionSnapshot.rounded(region.endSeconds), "speakers": region.speakers]
        }
        return object
    }

    static func segment(_ turn: WireTurn) -> SpeakerSegment {
        SpeakerSegment(speaker: turn.speaker, startSeconds: turn.startSeconds, endSeconds: turn.endSeconds)
    }

    private static func turns(_ segments: [SpeakerSegment]) -> [[String: Any]] {
        segments.sorted { ($0.startSeconds, $0.speaker) < ($1.startSeconds, $1.speaker) }.map {
            ["speaker": $0.speaker, "start": LiveSessionSnapshot.rounded($0.startSeconds), "end": LiveSessionSnapshot.rounded($0.endSeconds)]
        }
    }
}
