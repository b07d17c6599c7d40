/// Who a request or a session acts as, decided by its credential.
public enum Principal: Sendable, Hashable, CustomStringConvertible {
    /// The admin key (`keyID` "env" for SPEAKERSYNC_ADMIN_KEY), or anyone when `--auth off` ("open").
    case admin(keyID: String)
    /// A device token: acts only as `deviceID`.
    case device(deviceID: String, tokenID: String)

    /// The one device this principal may act as; nil for an admin (any device).
    public var deviceID: String? {
        if case .device(let deviceID, _) = self { return deviceID }
        return nil
    }

    public var isAdmin: Bool {
        if case .admin = self { return true }
        return false
    }

    /// The credential's public id, the key of rate limits and revocation ("admin:<id>" or "token:<id>").
    public var credentialKey: String {
        switch self {
        case .admin(let keyID): "admin:\(keyID)"
        case .device(_, let tokenID): "token:\(tokenID)"
        }
    }

    public var description: String {
        switch self {
        case .admin(let keyID): "admin key \(keyID)"
        case .device(let deviceID, let tokenID): "device \(deviceID) (token \(tokenID))"
        }
    }
}
