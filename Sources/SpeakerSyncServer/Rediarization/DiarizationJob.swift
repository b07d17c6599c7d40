import Foundation

/// A re-diarization of a conversation's stored audio as `GET /v1/diarization-jobs/{id}` reports it.
struct DiarizationJob: Sendable {
    enum Phase: String, Sendable { case queued, running, done, failed }

    let id: String
    let conversationID: String
    /// The device the conversation belongs to (who may see the job).
    let deviceID: String
    let provider: String
    let optionsJSON: String
    var phase: Phase = .queued
    /// Share of the audio handed to the provider, 0…1.
    var progress = 0.0
    var audioSeconds = 0.0
    var realTimeFactor: Double?
    var wallSeconds: Double?
    var speakers: Int?
    var error: String?
    let createdAt = Date()

    /// The labelling it writes.
    var labellingName: String { DiarizationJobService.labellingName(provider: provider) }

    var isFinished: Bool { phase == .done || phase == .failed }

    var jsonObject: [String: Any] {
        [
            "id": id, "conversation_id": conversationID, "provider": provider, "status": phase.rawValue,
            "progress": (progress * 1000).rounded() / 1000, "labelling": labellingName,
            "audio_seconds": audioSeconds, "real_time_factor": realTimeFactor as Any? ?? NSNull(),
            "wall_seconds": wallSeconds as Any? ?? NSNull(), "speakers": speakers as Any? ?? NSNull(),
            "error": error as Any? ?? NSNull(), "created_at": ISO8601DateFormatter().string(from: createdAt),
        ]
    }
}
