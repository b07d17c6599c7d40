import Foundation
import PostgresClient

/// Commands for a session another server runs (a rename or merge sent to the wrong server behind a
/// load balancer), through PostgreSQL (`session_commands`, migration 0010): the receiving server
/// queues the command and notifies its owner on `speakersync_fleet`; the owner applies it through
/// the session, as it would a request of its own, and writes the answer; the receiver waits for it.
/// No server-to-server network path is needed: every server already reaches PostgreSQL.
extension ConversationLeases {
    /// The live server other than this one that runs `conversationID`, if any.
    public func liveHolder(conversationID: String) throws -> Int? {
        try withConnection { connection in
            try connection.query("""
                SELECT c.server_instance FROM conversation_leases c
                WHERE c.conversation_id = $1 AND c.server_instance IS NOT NULL AND c.server_instance <> $2
                  AND \(ServerLease.isLive("c.server_instance"))
                """, [conversationID, serverInstance]).rows.first?.decode(Int.self, column: "server_instance")
        }
    }

    /// Queues `commandJSON` for the session `holder` runs and tells it; returns the command's id.
    /// Answered commands older than an hour are deleted on the way.
    public func submitCommand(conversationID: String, holder: Int, commandJSON: String) throws -> Int64 {
        try withConnection { connection in
            try connection.execute("DELETE FROM session_commands WHERE created_at < now() - interval '1 hour'")
            let id = try connection.query("""
                INSERT INTO session_commands (conversation_id, server_instance, command) VALUES ($1, $2, $3::jsonb) RETURNING id
                """, [conversationID, holder, commandJSON]).rows[0].decode(Int64.self, column: "id")
            try connection.execute("SELECT pg_notify($1, $2)", [Self.channel, FleetRequest.command(commandID: id, holder: holder).payload])
            return id
        }
    }

    /// A command addressed to this server that nobody answered yet.
    public func pendingCommand(id: Int64) throws -> (conversationID: String, commandJSON: String)? {
        try withConnection { connection in
            try connection.query("""
                SELECT conversation_id, command::text AS command FROM session_commands
                WHERE id = $1 AND server_instance = $2 AND status = 'pending'
                """, [id, serverInstance]).rows.first.map {
                (try $0.decode(String.self, column: "conversation_id"), try $0.decode(String.self, column: "command"))
            }
        }
    }

    /// The owner's answer (once: a command the receiver gave up on stays failed).
    public func answerCommand(id: Int64, succeeded: Bool, answerJSON: String) throws {
        try withConnection { connection in
            try connection.execute("""
                UPDATE session_commands SET status = CASE WHEN $2 THEN 'done' ELSE 'failed' END, answer = $3::jsonb
                WHERE id = $1 AND status = 'pending'
                """, [id, succeeded, answerJSON])
        }
    }

    /// Waits for the owner's answer, polling every 50 ms (the connection is free between polls).
    /// nil when none came within `timeoutSeconds`: the command is then failed, so a late owner
    /// does not apply what its caller was told did not happen.
    public func awaitAnswer(id: Int64, timeoutSeconds: Double) throws -> (succeeded: Bool, answerJSON: String)? {
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while true {
            let expired = Date() >= deadline
            let answer = try withConnection { connection -> (Bool, String)? in
                if expired {
                    try connection.execute("""
                        UPDATE session_commands SET status = 'failed', answer = '{"timed_out":true}' WHERE id = $1 AND status = 'pending'
                        """, [id])
                }
                guard let row = try connection.query("SELECT status, answer::text AS answer FROM session_commands WHERE id = $1", [id]).rows.first,
                      let answer = try row.decode(String?.self, column: "answer") else { return nil }
                return (try row.decode(String.self, column: "status") == "done", answer)
            }
            if let answer { return answer.1 == #"{"timed_out": true}"# ? nil : answer }
            if expired { return nil }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
