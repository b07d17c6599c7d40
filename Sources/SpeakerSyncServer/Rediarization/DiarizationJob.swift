import Foundation
import SpeakerSyncStore

/// A re-diarization of a conversation's stored audio as `GET /v1/diarization-jobs/{id}` reports it:
/// a `jobs` row of kind `rediarization` and the figures its run wrote.
struct DiarizationJob: Sendable {
    /// What a finished run writes into the row's `result` (and a failed one, its wall time).
    struct Figures: Codable, Sendable, Equatable {
        var audioSeconds: Double?
        var realTimeFactor: Double?
        var speakers: Int?
        var wallSeconds: Double?

        enum CodingKeys: String, CodingKey {
            case audioSeconds = "audio_seconds", realTimeFactor = "real_time_factor", speakers, wallSeconds = "wall_seconds"
        }

        var json: String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }

        /// A row's result; empty when it has none (or one this version cannot read).
        init(json: String?) {
            self = json.flatMap { try? JSONDecoder().decode(Figures.self, from: Data($0.utf8)) } ?? Figures()
        }

        init(audioSeconds: Double? = nil, realTimeFactor: Double? = nil, speakers: Int? = nil, wallSeconds: Double? = nil) {
            self.audioSeconds = audioSeconds
            self.realTimeFactor = realTimeFactor
            self.speakers = speakers
            self.wallSeconds = wallSeconds
        }
    }

    let record: JobRecord

    var id: String { record.id }
    var conversationID: String { record.conversationID ?? "" }
    /// The device the conversation belongs to (who may see the job).
    var deviceID: String { record.deviceID }
    var provider: String { record.provider }
    var optionsJSON: String { record.requestJSON }
    var figures: Figures { Figures(json: record.resultJSON) }

    /// The labelling a re-diarization with `provider` writes.
    static func labellingName(provider: String) -> String { "\(provider):rediarized" }

    var jsonObject: [String: Any] {
        let figures = figures
        return [
            "id": id, "conversation_id": conversationID, "provider": provider, "status": record.status.rawValue,
            "progress": (record.progress * 1000).rounded() / 1000, "labelling": Self.labellingName(provider: provider),
            "audio_seconds": figures.audioSeconds ?? 0, "real_time_factor": figures.realTimeFactor as Any? ?? NSNull(),
            "wall_seconds": figures.wallSeconds as Any? ?? NSNull(), "speakers": figures.speakers as Any? ?? NSNull(),
            "error": record.failureReason as Any? ?? NSNull(), "attempts": record.attempts,
            "created_at": ISO8601DateFormatter().string(from: record.createdAt),
        ]
    }
}
