import Foundation
import SpeakerSyncStore
import TranscriptMerge
import WebSocketTransport

/// What the comparison routes read and write.
protocol LabellingDirectory: Sendable {
    func labellings(conversationID: String) throws -> [LabellingSummary]
    func labelling(conversationID: String, name: String) throws -> LabellingRecord?
    func saveLabelling(conversationID: String, _ labelling: LabellingRecord) throws
    func words(conversationID: String) throws -> [LabelledWord]
    /// The conversation's stored audio chunks in timeline order (FLAC).
    func audioChunks(conversationID: String) throws -> [StoredAudioChunk]
    func hasStoredAudio(conversationID: String) throws -> Bool
}

/// `GET /v1/conversations/{id}/compare?providers=A,B[&reference=R]` and
/// `PUT /v1/conversations/{id}/references/{name}` (an RTTM body). The caller has already been shown
/// to see the conversation.
struct CompareRoutes {
    let directory: any LabellingDirectory
    let merge: MergeConfig
    /// Most labellings one comparison takes (pairs grow with the square).
    static let maxLabellings = 6

    static func register(in table: inout RouteTable, services: APIServices) {
        let routes = Capability(services.labellings.map { CompareRoutes(directory: $0, merge: services.merge) },
                                absent: "this server keeps no labellings")
        table.add(.get, "/v1/conversations/{id}/compare", name: "compare", access: .conversation(.id)) { context in
            try routes.get().compare(conversation: try context.conversation, context.request)
        }
        table.add(.put, "/v1/conversations/{id}/references/{name}", name: "put_reference", access: .conversation(.id)) { context in
            try routes.get().putReference(conversationID: try context.parameter(.id), name: try context.parameter(.name), context.request)
        }
    }

    func compare(conversation: ConversationSummary, _ request: HTTPRequest) throws -> HTTPResponse {
        let id = conversation.id
        let available = try directory.labellings(conversationID: id).filter { $0.source != .reference }.map(\.name)
        var names = (request.query["providers"] ?? "").split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        if names.isEmpty { names = available }
        guard Set(names).count == names.count else {
            throw APIError(status: 400, code: "invalid_parameter", message: "providers names a labelling twice")
        }
        guard names.count <= Self.maxLabellings else {
            throw APIError(status: 400, code: "invalid_parameter", message: "providers names \(names.count) labellings; at most \(Self.maxLabellings)")
        }
        var labellings: [LabellingRecord] = []
        for name in names {
            guard let labelling = try directory.labelling(conversationID: id, name: name) else {
                throw APIError(status: 404, code: "labelling_not_found",
                               message: "conversation \(id) has no labelling by \(name); it has: \(available.isEmpty ? "none" : available.joined(separator: ", "))")
            }
            labellings.append(labelling)
        }
        var reference: LabellingRecord?
        if let name = request.query["reference"], !name.isEmpty {
            guard let stored = try directory.labelling(conversationID: id, name: ReferenceLabelling.labellingName(name)) else {
                throw APIError(status: 404, code: "reference_not_found",
                               message: "conversation \(id) has no reference \(name); upload one with PUT /v1/conversations/\(id)/references/\(name)")
            }
            reference = stored
        }
        guard labellings.count + (reference == nil ? 0 : 1) >= 2 else {
            throw APIError(status: 400, code: "nothing_to_compare",
                           message: "a comparison needs two labellings (or one and a reference); conversation \(id) has: \(available.isEmpty ? "none" : available.joined(separator: ", "))")
        }
        var body = LabellingComparison(labellings: labellings, reference: reference, audioSeconds: conversation.audioSeconds).jsonObject
        body["conversation_id"] = id
        return APIHandler.json(body)
    }

    func putReference(conversationID id: String, name: String, _ request: HTTPRequest) throws -> HTTPResponse {
        guard ReferenceLabelling.isValidName(name) else {
            throw APIError(status: 400, code: "invalid_parameter", message: "a reference name is 1-64 characters of A-Z a-z 0-9 . _ -")
        }
        guard let text = String(bytes: request.body, encoding: .utf8) else {
            throw APIError(status: 400, code: "invalid_rttm", message: "the reference must be RTTM text in UTF-8")
        }
        let turns = try ReferenceLabelling.turns(rttm: text)
        let labelling = ReferenceLabelling.labelling(name: name, turns: turns, words: try directory.words(conversationID: id), merge: merge)
        try directory.saveLabelling(conversationID: id, labelling)
        return APIHandler.json([
            "conversation_id": id, "reference": name, "turns": labelling.turns.count,
            "speakers": Set(labelling.turns.map(\.speaker)).count, "words": labelling.words.count,
            "labelled_words": labelling.words.filter { $0.speaker != nil }.count,
        ])
    }
}
