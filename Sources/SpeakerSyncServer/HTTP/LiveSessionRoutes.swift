import WebSocketTransport

/// The sessions running on this server now, for the console: `GET /v1/sessions` (with their figures)
/// and `GET /v1/sessions/{conversation_id}` (one, with its transcript as it is now). A device token
/// sees its own device's only; another device's answers exactly like one that does not run.
enum LiveSessionRoutes {
    static func register(in table: inout RouteTable, services: APIServices) {
        let sessions = services.sessions
        table.add(.get, "/v1/sessions", name: "live_sessions", access: .credential) { context in
            let live = try sessions?.liveSessions(visibleTo: context.principal) ?? []
            return APIHandler.json(["sessions": live.map { $0.jsonObject() }])
        }
        table.add(.get, "/v1/sessions/{conversation_id}", name: "live_session", access: .credential) { context in
            let id = try context.parameter(.conversationID)
            guard let snapshot = try sessions?.liveSession(conversationID: id, visibleTo: context.principal) else {
                throw APIError(status: 404, code: "session_not_found", message: "no session of conversation '\(id)' is running on this server")
            }
            return APIHandler.json(snapshot.jsonObject())
        }
    }
}
