import Dispatch
import Foundation
import SpeakerSyncStore
import WebSocketTransport

/// The routes a running session answers: the console's list and view of live sessions, and a rename
/// or merge applied by the session that runs the conversation. Each asks the session on its own
/// queue and answers from its callback, so the HTTP worker hands the question over and returns
/// instead of waiting for a session that may be busy.
struct SessionRoutes {
    let sessions: SessionManager?
    let devices: (any DeviceDirectory)?
    /// Where PostgreSQL is asked when the session is gone: never the session's own queue.
    let workers: DispatchQueue

    /// Whether `route` is answered here, from a callback.
    static func answers(_ route: APIRoute) -> Bool {
        switch route {
        case .liveSessions, .liveSession, .changeSpeaker: true
        default: false
        }
    }

    /// GET /v1/sessions
    func list(as principal: Principal, reply: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void) {
        guard let sessions else { return reply(.success(APIHandler.json(["sessions": [Any]()]))) }
        sessions.liveSessions(visibleTo: principal) { live in
            reply(.success(APIHandler.json(["sessions": live.map { $0.jsonObject() }])))
        }
    }

    /// GET /v1/sessions/{conversation_id}
    func one(conversationID: String, as principal: Principal, reply: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void) {
        let notFound = APIError(status: 404, code: "session_not_found", message: "no session of conversation '\(conversationID)' is running on this server")
        guard let sessions else { return reply(.failure(notFound)) }
        sessions.liveSession(conversationID: conversationID, visibleTo: principal) { snapshot in
            guard let snapshot else { return reply(.failure(notFound)) }
            reply(.success(APIHandler.json(snapshot.jsonObject())))
        }
    }

    /// POST /v1/conversations/{id}/speakers/{label}: through the conversation's live session when it
    /// runs here, else in PostgreSQL (on the calling worker). The caller has checked the conversation
    /// is visible to it.
    func changeSpeaker(conversationID: String, label: String, _ request: HTTPRequest,
                       reply: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void) {
        let change: SpeakerChange
        do {
            change = try SpeakerChange.parse(request.body)
        } catch {
            return reply(.failure(error))
        }
        let stored = { @Sendable in
            reply(Result { () throws -> HTTPResponse in
                guard let devices else { throw APIError(status: 404, code: "not_found", message: "this server keeps no device settings") }
                var registry = SpeakerRegistry(speakers: try devices.speakers(conversationID: conversationID), keyLabels: [:])
                let applied = try change.apply(to: &registry, label: label)
                try devices.saveSpeakers(conversationID: conversationID, applied.changed.compactMap { registry.speaker($0) },
                                         relabel: applied.merged.map { (from: $0.from, to: $0.into) })
                return APIHandler.json(DeviceRoutes.speakersObject(conversationID, registry.speakers, live: false))
            })
        }
        guard let runner = sessions?.runner(conversationID: conversationID) else { return stored() }
        runner.changeSpeaker(label, change) { result in
            // nil: the session ended (or has not started) meanwhile; PostgreSQL holds the speakers then.
            guard let result else { return workers.async { stored() } }
            reply(result.map { APIHandler.json(DeviceRoutes.speakersObject(conversationID, $0, live: true)) }.mapError { $0 as any Error })
        }
    }
}
