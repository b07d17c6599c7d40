import Foundation
import Logging
import WebSocketTransport

/// The stored conversations: `GET /v1/conversations[?device_id][&limit][&cursor]`,
/// `GET`/`DELETE /v1/conversations/{id}`, `GET /v1/conversations/{id}/transcript[?format][&provider]`
/// and `GET /v1/conversations/{id}/labellings`.
struct ConversationRoutes {
    let services: APIServices
    let logger: Logger

    static func register(in table: inout RouteTable, services: APIServices, logger: Logger) {
        let routes = ConversationRoutes(services: services, logger: logger)
        table.add(.get, "/v1/conversations", name: "list_conversations", access: .credential) { try routes.list($0) }
        table.add(.get, "/v1/conversations/{id}", name: "conversation", access: .conversation(.id)) { context in
            APIHandler.json(try context.conversation.jsonObject)
        }
        table.add(.delete, "/v1/conversations/{id}", name: "delete_conversation", access: .conversation(.id)) { try routes.delete($0) }
        // Checks its format before the conversation: a bad one is 400 whoever owns the conversation.
        table.add(.get, "/v1/conversations/{id}/transcript", name: "transcript", access: .credential) { try routes.transcript($0) }
        table.add(.get, "/v1/conversations/{id}/labellings", name: "labellings", access: .conversation(.id)) { context in
            let id = try context.parameter(.id)
            return APIHandler.json(["conversation_id": id, "labellings": try services.reader.labellings(conversationID: id).map(\.jsonObject)])
        }
    }

    func list(_ context: RouteContext) throws -> HTTPResponse {
        let query = context.request.query
        var limit = 50
        if let text = query["limit"] {
            guard let value = Int(text), (1...APIHandler.maxPageSize).contains(value) else {
                throw APIError(status: 400, code: "invalid_parameter", message: "limit must be a whole number from 1 to \(APIHandler.maxPageSize)")
            }
            limit = value
        }
        let device = try APIHandler.scopedDevice(try context.principal, requested: query["device_id"])
        let page = try services.reader.listConversations(deviceID: device, limit: limit, cursor: query["cursor"])
        return APIHandler.json([
            "conversations": page.conversations.map(\.jsonObject),
            "next_cursor": page.nextCursor as Any? ?? NSNull(),
        ])
    }

    /// The conversation and everything stored with it.
    func delete(_ context: RouteContext) throws -> HTTPResponse {
        let id = try context.parameter(.id)
        let principal = try context.principal
        let eraser = try Capability(services.eraser, absent: "this server deletes no conversations").get()
        // A session writing it would store it again: it must end first.
        if services.sessions?.runner(conversationID: id) != nil {
            throw APIError(status: 409, code: "conversation_active", message: "conversation \(id) is being recorded; delete it once its session has ended")
        }
        guard try eraser.deleteConversation(id: id) else { throw APIHandler.notFound(id) }
        logger.info("conversation deleted", metadata: ["conversation_id": "\(id)", "by": "\(principal.deviceID ?? "admin")"])
        return APIHandler.json(["deleted": id])
    }

    /// The transcript, or one labelling's.
    func transcript(_ context: RouteContext) throws -> HTTPResponse {
        let request = context.request
        let formatName = request.query["format"] ?? "json"
        guard let format = TranscriptFormat(rawValue: formatName) else {
            throw APIError(status: 400, code: "invalid_parameter", message: "format must be one of \(TranscriptFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let id = try context.parameter(.id)
        _ = try ScopeMiddleware.visibleConversation(id, as: try context.principal, reader: services.reader)
        let document: TranscriptDocument
        if let provider = request.query["provider"], !provider.isEmpty {
            guard let labelled = try services.reader.transcript(id: id, labelling: provider) else {
                let names = try services.reader.labellings(conversationID: id).map(\.name)
                throw APIError(status: 404, code: "labelling_not_found",
                               message: "conversation \(id) has no labelling by \(provider); it has: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
            }
            document = labelled
        } else {
            guard let stored = try services.reader.transcript(id: id) else { throw APIHandler.notFound(id) }
            document = stored
        }
        return HTTPResponse(status: 200, contentType: format.contentType, body: Array(document.rendered(as: format).utf8))
    }
}
