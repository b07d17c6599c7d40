import SpeakerSyncStore
import Foundation

/// A conversation as `GET /v1/conversations` lists it.
public struct ConversationSummary: Sendable {
    public var id: String
    public var deviceID: String
    public var provider: String
    public var sampleRate: Int?
    public var status: String
    /// Why it is interrupted ("provider speakerkit crashed: signal 11 (SIGSEGV)"); nil otherwise.
    public var statusReason: String?
    public var audioSeconds: Double
    public var startedAt: Date?
    public var endedAt: Date?
    public var wordCount: Int
    public var unlabelledWordCount: Int
    public var speakers: [SessionSpeaker]

    public var jsonObject: [String: Any] {
        [
            "id": id, "device_id": deviceID, "provider": provider,
            "sample_rate": sampleRate as Any? ?? NSNull(), "status": status,
            "status_reason": statusReason as Any? ?? NSNull(), "audio_seconds": audioSeconds,
            "started_at": startedAt.map(Self.timestamp) as Any? ?? NSNull(),
            "ended_at": endedAt.map(Self.timestamp) as Any? ?? NSNull(),
            "word_count": wordCount, "unlabelled_word_count": unlabelledWordCount,
            "speakers": speakers.map { speaker -> [String: Any] in
                [
                    "label": speaker.label, "name": speaker.name,
                    "merged_into": speaker.mergedInto as Any? ?? NSNull(),
                ]
            },
        ]
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}

/// One page of `GET /v1/conversations`.
public struct ConversationPage: Sendable {
    public var conversations: [ConversationSummary]
    /// Opaque; pass as `cursor` to get the next page. nil on the last page.
    public var nextCursor: String?
}

/// The reads behind the HTTP routes. Blocking; called on the HTTP worker queue, never on the lws thread.
/// People and voice profiles, for the enrolment routes.
public protocol VoiceDirectory: Sendable {
    func insertPerson(_ person: PersonRecord) throws
    func people(deviceID: String) throws -> [PersonRecord]
    /// Deletes a person, only of `deviceID` when given; false when there is no such person (of that device).
    func deletePerson(id: String, deviceID: String?) throws -> Bool
    func speakerProfile(conversationID: String, label: String, provider: String) throws -> SpeakerProfileRecord?
}

public protocol ConversationReader: Sendable {
    func listConversations(deviceID: String?, limit: Int, cursor: String?) throws -> ConversationPage
    func conversation(id: String) throws -> ConversationSummary?
    func transcript(id: String) throws -> TranscriptDocument?
    func checkHealth() throws
    /// The conversation's stored labellings (every provider's view of its words), by name.
    func labellings(conversationID: String) throws -> [LabellingSummary]
    /// The conversation's words as one labelling labels them; nil when it has no labelling of that name.
    func transcript(id: String, labelling: String) throws -> TranscriptDocument?
}

extension LabellingSummary {
    /// `{"name","provider","source","complete","status_reason","turns","words","labelled_words","speakers","stats","updated_at"}`.
    var jsonObject: [String: Any] {
        [
            "name": name, "provider": provider, "source": source.rawValue, "complete": isComplete,
            "status_reason": statusReason as Any? ?? NSNull(), "turns": turnCount, "words": wordCount,
            "labelled_words": labelledWordCount, "speakers": speakerCount,
            "stats": (try? JSONSerialization.jsonObject(with: Data(statsJSON.utf8))) ?? [String: Any](),
            "updated_at": ISO8601DateFormatter().string(from: updatedAt),
        ]
    }
}
