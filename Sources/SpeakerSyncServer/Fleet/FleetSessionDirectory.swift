import SpeakerSyncStore

/// The live sessions other servers of the fleet run, as they published them (`conversation_leases`).
protocol FleetSessionDirectory: Sendable {
    /// This server's number (its own sessions are answered from memory).
    var serverInstance: Int { get }
    /// Other live servers' sessions; with `deviceID`, that device's only. Blocking.
    func remoteSessions(deviceID: String?, conversationID: String?) throws -> [RemoteSessionRecord]
    /// The live server other than this one running `conversationID`, if any. Blocking.
    func liveHolder(conversationID: String) throws -> Int?
    /// A rename or merge for the session `holder` runs, applied there. Blocking (at most a few seconds).
    func sendSpeakerChange(conversationID: String, holder: Int, label: String, body: [UInt8]) throws -> RoutedSpeakerChange.Outcome
}

extension PostgresBackend: FleetSessionDirectory {
    var serverInstance: Int { lease.instance }

    func remoteSessions(deviceID: String?, conversationID: String?) throws -> [RemoteSessionRecord] {
        try leases.remoteSessions(deviceID: deviceID, conversationID: conversationID)
    }

    func liveHolder(conversationID: String) throws -> Int? { try leases.liveHolder(conversationID: conversationID) }

    func sendSpeakerChange(conversationID: String, holder: Int, label: String, body: [UInt8]) throws -> RoutedSpeakerChange.Outcome {
        try RoutedSpeakerChange.send(leases, conversationID: conversationID, holder: holder, label: label, body: body)
    }
}
