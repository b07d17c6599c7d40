import Dispatch
import Foundation
import SpeakerSyncStore
import WebSocketTransport

/// The routes a running session answers: the console's list and view of live sessions
/// (`GET /v1/sessions[/{conversation_id}]`; a device token sees its own device's only, another
/// device's answers exactly like one that does not run), and a speaker's rename or merge
/// (`POST /v1/conversations/{id}/speakers/{label}`), applied by the session that runs the
/// conversation, else in PostgreSQL. Each asks the session on its own queue and answers from its
/// callback, so the HTTP worker hands the question over and returns instead of waiting for a
/// session that may be busy.
struct SessionRoutes {
    let sessions: SessionManager?
    let fleet: (any FleetSessionDirectory)?
    let devices: (any DeviceDirectory)?
    /// Where PostgreSQL is asked when the session is gone: never the session's own queue.
    let workers: DispatchQueue

    static func register(in table: inout RouteTable, services: APIServices) {
        let routes = SessionRoutes(sessions: services.sessions, fleet: services.fleetSessions, devices: services.devices,
                                   workers: DispatchQueue(label: "speakersync.http.speakers", attributes: .concurrent))
        table.addAnsweringLater(.get, "/v1/sessions", name: "live_sessions", access: .credential) { context, reply in
            routes.list(as: try context.principal, reply: reply)
        }
        table.addAnsweringLater(.get, "/v1/sessions/{conversation_id}", name: "live_session", access: .credential) { context, reply in
            routes.one(conversationID: try context.parameter(.conversationID), as: try context.principal, reply: reply)
        }
        table.addAnsweringLater(.post, "/v1/conversations/{id}/speakers/{label}", name: "change_speaker",
                                access: .conversation(.id)) { context, reply in
            routes.changeSpeaker(conversationID: try context.parameter(.id), label: try context.parameter(.label), context.request, reply: reply)
        }
    }

    /// GET /v1/sessions: this server's sessions from memory, then those the rest of the fleet
    /// published (each with its `server_instance`; their figures are at most a few seconds old).
    func list(as principal: Principal, reply: @escaping RouteReply) {
        let remote = { @Sendable (local: [LiveSessionSnapshot]) in
            workers.async {
                reply(Result {
                    let others = try fleet?.remoteSessions(deviceID: principal.deviceID, conversationID: nil) ?? []
                    let instance = fleet?.serverInstance
                    let here = local.map { snapshot in
                        var object = snapshot.jsonObject()
                        if let instance { object["server_instance"] = instance }
                        return object
                    }
                    return APIHandler.json(["sessions": here + others.map(Self.object)])
                }.mapError { error in
                    APIError(status: 503, code: "storage_unavailable", message: "the fleet's sessions could not be read: retry") as any Error
                })
            }
        }
        guard let sessions else { return remote([]) }
        sessions.liveSessions(visibleTo: principal) { live in remote(live) }
    }

    /// GET /v1/sessions/{conversation_id}: with its transcript when it runs here; figures only when
    /// another server runs it (its transcript so far is at `GET /v1/conversations/{id}`).
    func one(conversationID: String, as principal: Principal, reply: @escaping RouteReply) {
        let notFound = APIError(status: 404, code: "session_not_found", message: "no session of conversation '\(conversationID)' is running")
        let remote = { @Sendable in
            workers.async {
                reply(Result {
                    guard let found = try fleet?.remoteSessions(deviceID: principal.deviceID, conversationID: conversationID).first else {
                        throw notFound
                    }
                    return APIHandler.json(Self.object(found))
                })
            }
        }
        guard let sessions else { return remote() }
        sessions.liveSession(conversationID: conversationID, visibleTo: principal) { snapshot in
            guard let snapshot else { return remote() }
            reply(.success(APIHandler.json(snapshot.jsonObject())))
        }
    }

    /// A session of another server as it published it, with who runs it.
    static func object(_ record: RemoteSessionRecord) -> [String: Any] {
        var object = (try? JSONSerialization.jsonObject(with: Data(record.snapshotJSON.utf8))) as? [String: Any] ?? [:]
        object["conversation_id"] = record.conversationID
        object["device_id"] = record.deviceID
        object["server_instance"] = record.serverInstance
        if object["started_at"] == nil { object["started_at"] = record.acquiredAt.formatted(.iso8601) }
        return object
    }

    /// POST /v1/conversations/{id}/speakers/{label}: through the conversation's live session when it
    /// runs here, else in PostgreSQL (on the calling worker). The caller has checked the conversation
    /// is visible to it.
    func changeSpeaker(conversationID: String, label: String, _ request: HTTPRequest,
                       reply: @escaping RouteReply) {
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
        guard let runner = sessions?.runner(conversationID: conversationID) else {
            guard let fleet else { return stored() }
            // Another server of the fleet may run it: its session applies the change, else PostgreSQL.
            return workers.async {
                do {
                    guard let holder = try fleet.liveHolder(conversationID: conversationID) else { return stored() }
                    switch try fleet.sendSpeakerChange(conversationID: conversationID, holder: holder, label: label, body: request.body) {
                    case .applied(let json): reply(.success(HTTPResponse(status: 200, contentType: "application/json", body: Array(json.utf8))))
                    case .refused(let error): reply(.failure(error))
                    case .notLive: stored()
                    case .timedOut:
                        reply(.failure(APIError(status: 503, code: "owner_unavailable",
                                                message: "the server running this conversation's session did not answer; retry")))
                    }
                } catch {
                    reply(.failure(APIError(status: 503, code: "storage_unavailable", message: "the fleet could not be asked; retry")))
                }
            }
        }
        runner.changeSpeaker(label, change) { result in
            // nil: the session ended (or has not started) meanwhile; PostgreSQL holds the speakers then.
            guard let result else { return workers.async { stored() } }
            reply(result.map { APIHandler.json(DeviceRoutes.speakersObject(conversationID, $0, live: true)) }.mapError { $0 as any Error })
        }
    }
}
