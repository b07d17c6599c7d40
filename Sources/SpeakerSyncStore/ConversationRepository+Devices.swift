import Foundation
import PostgresClient

/// A device's stored settings.
public struct DeviceSettingsRecord: Sendable, Equatable {
    public var deviceID: String
    /// The provider a `start` without one gets; nil: the server default.
    public var provider: String?
    public var updatedAt: Date?

    public init(deviceID: String, provider: String?, updatedAt: Date?) {
        self.deviceID = deviceID
        self.provider = provider
        self.updatedAt = updatedAt
    }
}

/// A device the server knows: from its settings or its conversations.
public struct DeviceRecord: Sendable {
    public var settings: DeviceSettingsRecord
    public var conversationCount: Int
    public var lastSeen: Date?
}

extension ConversationRepository {
    /// The device's settings; a device never configured has provider nil and no date.
    public func deviceSettings(deviceID: String) throws -> DeviceSettingsRecord {
        try withConnection { connection in
            let row = try connection.query("SELECT provider, updated_at FROM device_settings WHERE device_id = $1", [deviceID]).rows.first
            return DeviceSettingsRecord(deviceID: deviceID, provider: try row?.decode(String?.self, column: "provider"),
                                        updatedAt: try row?.decode(Date.self, column: "updated_at"))
        }
    }

    /// Stores the device's provider choice (nil clears it); the stored record.
    public func setDeviceProvider(deviceID: String, provider: String?) throws -> DeviceSettingsRecord {
        try withConnection { connection in
            let row = try connection.query("""
                INSERT INTO device_settings (device_id, provider, updated_at) VALUES ($1, $2, now())
                ON CONFLICT (device_id) DO UPDATE SET provider = EXCLUDED.provider, updated_at = EXCLUDED.updated_at
                RETURNING provider, updated_at
                """, [deviceID, provider]).rows.first
            return DeviceSettingsRecord(deviceID: deviceID, provider: try row?.decode(String?.self, column: "provider"),
                                        updatedAt: try row?.decode(Date.self, column: "updated_at"))
        }
    }

    /// Every device with settings or conversations, most recently seen first.
    public func devices(limit: Int) throws -> [DeviceRecord] {
        try withConnection { connection in
            try connection.query("""
                WITH seen AS (SELECT device_id, count(*) AS conversations, max(started_at) AS last_seen FROM conversations GROUP BY device_id)
                SELECT coalesce(s.device_id, d.device_id) AS device_id, d.provider, d.updated_at,
                       coalesce(s.conversations, 0)::bigint AS conversations, s.last_seen
                FROM seen s FULL OUTER JOIN device_settings d ON d.device_id = s.device_id
                ORDER BY greatest(s.last_seen, d.updated_at) DESC NULLS LAST, 1 LIMIT $1
                """, [limit]).rows.map { row in
                DeviceRecord(
                    settings: DeviceSettingsRecord(deviceID: try row.decode(String.self, column: "device_id"),
                                                   provider: try row.decode(String?.self, column: "provider"),
                                                   updatedAt: try row.decode(Date?.self, column: "updated_at")),
                    conversationCount: try row.decode(Int.self, column: "conversations"),
                    lastSeen: try row.decode(Date?.self, column: "last_seen"))
            }
        }
    }

    /// Writes a stored conversation's changed speakers (a rename or a merge made outside a session)
    /// and, for a merge, relabels the source's words and turns, in one transaction.
    public func saveSpeakers(conversationID: String, _ speakers: [SessionSpeaker], relabel: (from: String, to: String)?) throws {
        try withConnection { connection in
            try connection.transaction { connection in
                for speaker in speakers {
                    _ = try connection.execute(
                        "UPDATE speakers SET display_name = $3, merged_into = $4 WHERE conversation_id = $1 AND label = $2",
                        [conversationID, speaker.label, speaker.displayName, speaker.mergedInto])
                }
                if let relabel {
                    _ = try connection.execute("UPDATE words SET speaker = $3 WHERE conversation_id = $1 AND speaker = $2",
                                               [conversationID, relabel.from, relabel.to])
                    _ = try connection.execute("UPDATE speaker_turns SET speaker = $3 WHERE conversation_id = $1 AND speaker = $2",
                                               [conversationID, relabel.from, relabel.to])
                }
            }
        }
    }
}
