import Foundation

/// A device token as stored (schema/0004_credentials.sql): never the token, only its digest.
public struct DeviceTokenRecord: Sendable, Equatable {
    public var tokenID: String
    public var deviceID: String
    /// Lower-case hex SHA-256 of the whole token text.
    public var digest: String
    public var label: String
    public var createdAt: Date
    public var revokedAt: Date?

    public init(tokenID: String, deviceID: String, digest: String, label: String, createdAt: Date = Date(), revokedAt: Date? = nil) {
        self.tokenID = tokenID
        self.deviceID = deviceID
        self.digest = digest
        self.label = label
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// A live admin key as stored: its public id and digest.
public struct AdminKeyRecord: Sendable, Equatable {
    public var keyID: String
    public var digest: String

    public init(keyID: String, digest: String) {
        self.keyID = keyID
        self.digest = digest
    }
}
