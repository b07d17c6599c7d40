import Foundation
import SpeakerSyncStore
import TranscriptMerge
import Statistics

/// What the console shows of a running session: who, with which provider, how far, how fast, and
/// (when asked for) its transcript as the device sees it now. Taken on the session's queue, so the
/// figures and the transcript are of one moment.
struct LiveSessionSnapshot: Sendable {
    var conversationID: String
    var deviceID: String
    var provider: String
    var startedAt: Date
    /// Audio received in this session (not counting a resumed conversation's earlier audio).
    var audioSeconds: Double
    var wordCount: Int
    var unlabelledWordCount: Int
    var speakerCount: Int
    /// Provider CPU per second of audio so far; nil before the first chunk was processed.
    var realTimeFactor: Double?
    /// Words' time from being ready (their audio received) to their first speaker label.
    var firstLabelLatenciesSeconds: [Double]
    /// The last `recentChunkLimit` chunks' processing times (wall clock).
    var recentChunkSeconds: [Double]
    var finalized: Bool
    /// nil unless the transcript was asked for.
    var transcript: TranscriptDocument?
    /// The session's lease (published with the snapshot only while the epoch still holds); not in the JSON.
    var fence: WriteFence?

    static let recentChunkLimit = 200

    func jsonObject() -> [String: Any] {
        var object: [String: Any] = [
            "conversation_id": conversationID,
            "device_id": deviceID,
            "provider": provider,
            "started_at": startedAt.formatted(.iso8601),
            "audio_seconds": Self.rounded(audioSeconds),
            "word_count": wordCount,
            "unlabelled_word_count": unlabelledWordCount,
            "speaker_count": speakerCount,
            "real_time_factor": realTimeFactor.map { Self.rounded($0, places: 4) } as Any? ?? NSNull(),
            "label_latency_seconds": Self.summary(firstLabelLatenciesSeconds),
            "chunk_seconds": Self.summary(recentChunkSeconds),
            "recent_chunk_seconds": recentChunkSeconds.suffix(100).map { Self.rounded($0, places: 4) },
            "finalized": finalized,
        ]
        if let transcript {
            object["transcript"] = transcript.jsonObject()
            object["speakers"] = transcript.names.sorted { $0.key < $1.key }.map { ["label": $0.key, "name": $0.value] }
        }
        return object
    }

    /// `{"count", "p50", "p95", "max"}` of a sample (nearest rank, as `speakersync eval` reports
    /// them); quantiles null when it is empty.
    static func summary(_ values: [Double]) -> [String: Any] {
        let percentiles = Percentiles(values)
        func value(_ quantile: Double?) -> Any { quantile.map { rounded($0, places: 4) } as Any? ?? NSNull() }
        return ["count": percentiles.count, "p50": value(percentiles.p50), "p95": value(percentiles.p95), "max": value(percentiles.max)]
    }

    static func rounded(_ value: Double, places: Int = 3) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }
}
