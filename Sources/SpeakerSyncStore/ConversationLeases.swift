import Foundation
import Logging
import PostgresClient

/// Which server runs each conversation, with a fencing epoch (Kleppmann's fencing tokens), and the
/// fleet's registry of live sessions (`conversation_leases`, migration 0010).
///
/// A session claims its conversation before it loads it. The claim succeeds when nobody holds the
/// conversation, this server holds it, or its holder is not live (`ServerLease.isLive`), and it
/// always increases the epoch. Every write of the session carries that epoch (`WriteFence`), and
/// the store writer commits a write only while the lease row still has it, so a server that lost
/// its conversation (a partition, a pause) can never write after another took over.
///
/// One connection of its own (`SerialConnection`), one statement at a time.
public final class ConversationLeases: Sendable {
    /// The channel fleet requests go out on (handovers, commands for a session's owner).
    public static let channel = "speakersync_fleet"

    public let serverInstance: Int
    private let connection: SerialConnection

    public init(connectionString: String, serverInstance: Int, logger: Logger) throws {
        self.serverInstance = serverInstance
        connection = try SerialConnection(connectionString: connectionString, config: PGConnectionConfig.interactive.detectingDeadPeers(withinSeconds: 10))
    }

    func withConnection<T>(_ body: (PGConnection) throws -> T) throws -> T {
        try connection.withConnection(body)
    }

    /// What a claim found.
    public enum Claim: Sendable, Equatable {
        /// The conversation is this server's under `epoch` (its writes carry it).
        case acquired(epoch: Int64)
        /// A live server holds it.
        case held(serverInstance: Int)
    }

    /// Claims `conversationID` for this server (see the type's notes). Records the claim in
    /// `lease_history`.
    public func claim(conversationID: String, deviceID: String) throws -> Claim {
        try withConnection { connection in
            // A holder that releases between the two statements leaves nothing to wait for: claim again.
            for _ in 0..<3 {
                let claimed = try connection.query("""
                    WITH claimed AS (
                        INSERT INTO conversation_leases AS c (conversation_id, epoch, server_instance, device_id)
                        VALUES ($1, 1, $2, $3)
                        ON CONFLICT (conversation_id) DO UPDATE
                          SET epoch = c.epoch + 1, server_instance = $2, device_id = $3, acquired_at = clock_timestamp(),
                              snapshot = NULL, published_at = NULL
                          WHERE c.server_instance IS NULL OR c.server_instance = $2 OR NOT \(ServerLease.isLive("c.server_instance"))
                        RETURNING epoch),
                    history AS (
                        INSERT INTO lease_history (conversation_id, epoch, server_instance)
                        SELECT $1, epoch, $2 FROM claimed)
                    SELECT epoch FROM claimed
                    """, [conversationID, serverInstance, deviceID])
                if let row = claimed.rows.first {
                    return .acquired(epoch: try row.decode(Int64.self, column: "epoch"))
                }
                let holder = try connection.query("SELECT server_instance FROM conversation_leases WHERE conversation_id = $1",
                                                  [conversationID]).rows.first
                if let holder = try holder?.decode(Int?.self, column: "server_instance") { return .held(serverInstance: holder) }
            }
            throw StoreError(code: .writeFailed, message: "the lease of conversation \(conversationID) changed hands three times during one claim")
        }
    }

    /// Asks the server holding `conversationID` to hand it over (its session stores what it has,
    /// closes its device with `resumed_elsewhere` and releases the lease).
    public func requestHandover(conversationID: String, from holder: Int) throws {
        let payload = FleetRequest.handover(conversationID: conversationID, holder: holder).payload
        try withConnection { connection in
            try connection.execute("SELECT pg_notify($1, $2)", [Self.channel, payload])
        }
    }

    /// Gives the conversation up, if this epoch still holds it (a session's end, after its last write).
    public func release(conversationID: String, epoch: Int64) throws {
        try withConnection { connection in
            try connection.execute("""
                UPDATE conversation_leases SET server_instance = NULL, snapshot = NULL, published_at = NULL
                WHERE conversation_id = $1 AND epoch = $2 AND server_instance = $3
                """, [conversationID, epoch, serverInstance])
        }
    }

    /// Gives up a lease this server holds with no session behind it (whatever its epoch): a session
    /// that ended while PostgreSQL was away could not release its own.
    public func releaseIdle(conversationID: String) throws {
        try withConnection { connection in
            try connection.execute("""
                UPDATE conversation_leases SET server_instance = NULL, snapshot = NULL, published_at = NULL
                WHERE conversation_id = $1 AND server_instance = $2
                """, [conversationID, serverInstance])
        }
    }

    /// Publishes what this server's sessions look like now (JSON objects keyed by conversation), for
    /// the fleet's session list. Rows this server no longer holds are left alone.
    public func publish(_ snapshots: [(conversationID: String, epoch: Int64, json: String)]) throws {
        guard !snapshots.isEmpty else { return }
        try withConnection { connection in
            try connection.execute("""
                UPDATE conversation_leases c SET snapshot = p.snapshot::jsonb, published_at = now()
                FROM unnest($1::text[], $2::bigint[], $3::text[]) AS p(conversation_id, epoch, snapshot)
                WHERE c.conversation_id = p.conversation_id AND c.epoch = p.epoch AND c.server_instance = $4
                """, [snapshots.map(\.conversationID), snapshots.map(\.epoch), snapshots.map(\.json), serverInstance])
        }
    }

    /// The sessions other live servers run and have published (not this one's: it answers for its
    /// own from memory); with `deviceID`, that device's only. Newest first.
    public func remoteSessions(deviceID: String?, conversationID: String? = nil) throws -> [RemoteSessionRecord] {
        try withConnection { connection in
            try connection.query("""
                SELECT c.conversation_id, c.device_id, c.server_instance, c.epoch, c.acquired_at,
                       coalesce(c.snapshot::text, '{}') AS snapshot
                FROM conversation_leases c
                WHERE c.server_instance IS NOT NULL AND c.server_instance <> $1 AND c.published_at IS NOT NULL
                  AND ($2::text IS NULL OR c.device_id = $2)
                  AND ($3::text IS NULL OR c.conversation_id = $3)
                  AND \(ServerLease.isLive("c.server_instance"))
                ORDER BY c.acquired_at DESC
                LIMIT 1000
                """, [serverInstance, deviceID, conversationID]).rows.map(RemoteSessionRecord.init(row:))
        }
    }
}

/// A live session another server runs, as it last published it.
public struct RemoteSessionRecord: Sendable {
    public var conversationID: String
    public var deviceID: String
    public var serverInstance: Int
    public var epoch: Int64
    public var acquiredAt: Date
    /// The owner's last published snapshot (a JSON object; `{}` before its first).
    public var snapshotJSON: String

    init(row: PGRow) throws {
        conversationID = try row.decode(String.self, column: "conversation_id")
        deviceID = try row.decode(String.self, column: "device_id")
        serverInstance = try row.decode(Int.self, column: "server_instance")
        epoch = try row.decode(Int64.self, column: "epoch")
        acquiredAt = try row.decode(Date.self, column: "acquired_at")
        snapshotJSON = try row.decode(String.self, column: "snapshot")
    }
}

/// What a `speakersync_fleet` notification asks of one server: text payloads
/// (`handover <holder> <conversation id>`), so that no JSON parser stands between a NOTIFY and its
/// meaning. Conversation ids hold no spaces or newlines (the protocol's id rules).
public enum FleetRequest: Sendable, Equatable {
    case handover(conversationID: String, holder: Int)
    /// A command for the session of `conversationID` was queued in `session_commands` (id `commandID`).
    case command(commandID: Int64, holder: Int)

    public var payload: String {
        switch self {
        case .handover(let conversationID, let holder): "handover \(holder) \(conversationID)"
        case .command(let commandID, let holder): "command \(holder) \(commandID)"
        }
    }

    public init?(payload: String) {
        let parts = payload.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let holder = Int(parts[1]) else { return nil }
        switch parts[0] {
        case "handover" where !parts[2].isEmpty: self = .handover(conversationID: String(parts[2]), holder: holder)
        case "command": guard let id = Int64(parts[2]) else { return nil }; self = .command(commandID: id, holder: holder)
        default: return nil
        }
    }

    /// The server the request is for.
    public var holder: Int {
        switch self {
        case .handover(_, let holder), .command(_, let holder): holder
        }
    }
}
