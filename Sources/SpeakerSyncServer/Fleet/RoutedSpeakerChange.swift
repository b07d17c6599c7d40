import Foundation
import Logging
import SpeakerSyncStore

/// A rename or merge (`POST /v1/conversations/{id}/speakers/{label}`) that reached a server other
/// than the one running the conversation's session: routed to the owner through `session_commands`,
/// so the live session applies it (its device hears `speakers` at once) instead of PostgreSQL being
/// changed behind the session's back.
enum RoutedSpeakerChange {
    /// How long the receiving server waits for the owner's answer before answering 503.
    static let answerWaitSeconds = 5.0

    enum Outcome: Sendable {
        /// The owner's session applied it: the speakers object to answer with (JSON text).
        case applied(String)
        /// The owner refused it (an unknown label, a merge into itself): the same error it would give.
        case refused(APIError)
        /// The session ended meanwhile: PostgreSQL holds the speakers now.
        case notLive
        case timedOut
    }

    static func commandJSON(label: String, body: [UInt8]) -> String {
        json(["label": label, "body": String(decoding: body, as: UTF8.self)])
    }

    /// On the receiving server (a worker thread, blocking).
    static func send(_ leases: ConversationLeases, conversationID: String, holder: Int, label: String, body: [UInt8]) throws -> Outcome {
        let id = try leases.submitCommand(conversationID: conversationID, holder: holder, commandJSON: commandJSON(label: label, body: body))
        guard let answer = try leases.awaitAnswer(id: id, timeoutSeconds: answerWaitSeconds) else { return .timedOut }
        if answer.succeeded { return .applied(answer.answerJSON) }
        let object = (try? JSONSerialization.jsonObject(with: Data(answer.answerJSON.utf8))) as? [String: Any] ?? [:]
        guard let status = object["status"] as? Int, let code = object["code"] as? String else { return .notLive }
        return .refused(APIError(status: status, code: code, message: object["message"] as? String ?? code))
    }

    /// On the owner (the fleet listener's thread): applies command `id` through the session, if it
    /// still runs here, and writes the answer from the session's reply.
    static func handle(id: Int64, leases: ConversationLeases, sessions: SessionManager, logger: Logger) {
        do {
            guard let (conversationID, command) = try leases.pendingCommand(id: id) else { return }
            let object = (try? JSONSerialization.jsonObject(with: Data(command.utf8))) as? [String: Any] ?? [:]
            let label = object["label"] as? String ?? ""
            let body = Array((object["body"] as? String ?? "").utf8)
            let answer = { @Sendable (succeeded: Bool, json: String) in
                do { try leases.answerCommand(id: id, succeeded: succeeded, answerJSON: json) } catch {
                    logger.warning("routed speaker change: answer not written", metadata: ["error": "\(error)"])
                }
            }
            let change: SpeakerChange
            do throws(APIError) {
                change = try SpeakerChange.parse(body)
            } catch {
                return answer(false, refusal(error))
            }
            guard let runner = sessions.runner(conversationID: conversationID) else { return answer(false, "{}") }
            runner.changeSpeaker(label, change) { result in
                switch result {
                case nil: answer(false, "{}")
                case .success(let speakers)?: answer(true, json(DeviceRoutes.speakersObject(conversationID, speakers, live: true)))
                case .failure(let error)?: answer(false, refusal(error))
                }
            }
        } catch {
            logger.warning("routed speaker change failed", metadata: ["command": "\(id)", "error": "\(error)"])
        }
    }

    private static func refusal(_ error: APIError) -> String {
        json(["status": error.status, "code": error.code, "message": error.message])
    }

    private static func json(_ object: [String: Any]) -> String {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
