import PostgresClient

/// One conversation's claim as a drain's steps carry it.
struct FencedConversation: Hashable, Sendable {
    var conversationID: String
    var fence: WriteFence
}

/// Steps whose fencing epoch their conversation's lease no longer has: nothing of the drain was
/// written (the transaction rolled back); the writer refuses these steps and writes the rest.
struct StaleFences: Error {
    var stale: Set<FencedConversation>
}

extension ChangeSet {
    /// Inside the drain's transaction, before anything is written: the lease rows of the fenced
    /// conversations, read FOR SHARE. A claim elsewhere (an UPDATE of the row) therefore waits until
    /// this transaction ends, and a claim that committed first is seen here, so a write is committed
    /// only while its epoch holds the conversation. Throws `StaleFences` when some epoch does not.
    func checkFences(on connection: PGConnection) throws {
        guard !fences.isEmpty else { return }
        let ids = Array(Set(fences.keys.map(\.conversationID))).sorted()
        var current: [String: Int64] = [:]
        for row in try connection.query("""
            SELECT conversation_id, epoch FROM conversation_leases WHERE conversation_id = ANY($1::text[])
            ORDER BY conversation_id FOR SHARE
            """, [ids]).rows {
            current[try row.decode(String.self, column: "conversation_id")] = try row.decode(Int64.self, column: "epoch")
        }
        let stale = Set(fences.keys.filter { current[$0.conversationID] != $0.fence.epoch })
        if !stale.isEmpty { throw StaleFences(stale: stale) }
    }

    /// After the drain's writes, in the same transaction: which server wrote under which epoch, for
    /// audits (`conversation_writes`; the fleet fault harness holds the fencing to it).
    func recordFencedWrites(on connection: PGConnection) throws {
        guard !fences.isEmpty else { return }
        let entries = fences.sorted { ($0.key.conversationID, $0.key.fence.epoch) < ($1.key.conversationID, $1.key.fence.epoch) }
        try connection.execute("""
            INSERT INTO conversation_writes AS w (conversation_id, epoch, server_instance, steps)
            SELECT * FROM unnest($1::text[], $2::bigint[], $3::int[], $4::bigint[])
            ON CONFLICT (conversation_id, epoch, server_instance)
              DO UPDATE SET steps = w.steps + excluded.steps, last_at = clock_timestamp()
            """, [entries.map(\.key.conversationID), entries.map(\.key.fence.epoch), entries.map(\.key.fence.serverInstance),
                  entries.map { Int64($0.value) }])
    }

    /// Last in the drain's transaction: the leases of the sessions that ended in it, given up where
    /// the step's epoch and server still hold them (a claim since has moved the epoch on: nothing
    /// to give up). The epoch stays, so the next claim increases it and fences anything later.
    func releaseLeases(on connection: PGConnection) throws {
        guard !leaseReleases.isEmpty else { return }
        let entries = leaseReleases.sorted { ($0.conversationID, $0.fence.epoch) < ($1.conversationID, $1.fence.epoch) }
        try connection.execute("""
            UPDATE conversation_leases c SET server_instance = NULL, snapshot = NULL, published_at = NULL
            FROM unnest($1::text[], $2::bigint[], $3::int[]) AS r(conversation_id, epoch, server_instance)
            WHERE c.conversation_id = r.conversation_id AND c.epoch = r.epoch AND c.server_instance = r.server_instance
            """, [entries.map(\.conversationID), entries.map(\.fence.epoch), entries.map(\.fence.serverInstance)])
    }
}
