import Foundation
import PostgresClient

/// Device tokens and admin keys (schema/0004_credentials.sql). Digests only; see docs/security.md.
extension ConversationRepository {
    public func insertDeviceToken(_ token: DeviceTokenRecord) throws {
        try withConnection { connection in
            _ = try connection.execute(
                "INSERT INTO device_tokens (token_id, device_id, digest, label) VALUES ($1, $2, $3, $4)",
                [token.tokenID, token.deviceID, token.digest, token.label])
        }
    }

    /// Tokens of one device (every device when nil), revoked ones included, oldest first.
    public func deviceTokens(deviceID: String?) throws -> [DeviceTokenRecord] {
        try withConnection { connection in
            let result = try connection.query(
                """
                SELECT token_id, device_id, digest, label, created_at, revoked_at FROM device_tokens
                WHERE ($1::text IS NULL OR device_id = $1) ORDER BY created_at, token_id
                """, [deviceID])
            return try result.rows.map(Self.deviceToken)
        }
    }

    /// Revokes a device's token; false when the device has no live token with that id.
    public func revokeDeviceToken(deviceID: String, tokenID: String) throws -> Bool {
        try withConnection { connection in
            try connection.query(
                "UPDATE device_tokens SET revoked_at = now() WHERE token_id = $1 AND device_id = $2 AND revoked_at IS NULL RETURNING token_id",
                [tokenID, deviceID]).rows.count == 1
        }
    }

    /// Every credential that is not revoked: what a server's `CredentialBook` holds.
    public func liveCredentials() throws -> (tokens: [DeviceTokenRecord], adminKeys: [AdminKeyRecord]) {
        try withConnection { connection in
            let tokens = try connection.query(
                "SELECT token_id, device_id, digest, label, created_at, revoked_at FROM device_tokens WHERE revoked_at IS NULL", [])
            let keys = try connection.query("SELECT key_id, digest FROM admin_keys WHERE revoked_at IS NULL", [])
            return (try tokens.rows.map(Self.deviceToken), try keys.rows.map { row in
                AdminKeyRecord(keyID: try row.decode(String.self, column: "key_id"), digest: try row.decode(String.self, column: "digest"))
            })
        }
    }

    /// Stores a new admin key; with `revokingOthers`, every other live admin key is revoked in the same
    /// transaction (rotation: there is never a moment with no valid key, nor one with two).
    public func insertAdminKey(_ key: AdminKeyRecord, revokingOthers: Bool) throws {
        try withConnection { connection in
            try connection.transaction { connection in
                if revokingOthers {
                    _ = try connection.execute("UPDATE admin_keys SET revoked_at = now() WHERE revoked_at IS NULL", [])
                }
                _ = try connection.execute("INSERT INTO admin_keys (key_id, digest) VALUES ($1, $2)", [key.keyID, key.digest])
            }
        }
    }

    private static func deviceToken(_ row: PGRow) throws -> DeviceTokenRecord {
        DeviceTokenRecord(
            tokenID: try row.decode(String.self, column: "token_id"), deviceID: try row.decode(String.self, column: "device_id"),
            digest: try row.decode(String.self, column: "digest"), label: try row.decode(String.self, column: "label"),
            createdAt: try row.decode(Date.self, column: "created_at"), revokedAt: try row.decode(Date?.self, column: "revoked_at"))
    }
}
