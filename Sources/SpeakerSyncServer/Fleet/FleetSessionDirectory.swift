import SpeakerSyncStore

/// The live sessions other servers of the fleet run, as they published them (`conversation_leases`).
protocol FleetSessionDirectory: Sendable {
    /// This server's number (its own sessions are answered from memory).
    var serverInstance: Int { get }
    /// Other live servers' sessions; with `deviceID`, that device's only. Blocking.
    func remoteSessions(deviceID: String?, conversationID: String?) throws -> [RemoteSessionRecord]
}

extension PostgresBackend: FleetSessionDirectory {
    var serverInstance: Int { lease.instance }

    func remoteSessions(deviceID: String?, conversationID: String?) throws -> [RemoteSessionRecord] {
        try leases.remoteSessions(deviceID: deviceID, conversationID: conversationID)
    }
}
