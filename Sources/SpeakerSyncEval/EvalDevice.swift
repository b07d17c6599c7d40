import SpeakerSyncClient

/// The device an evaluation's sessions run as. A device token may act only as its own device (the
/// server refuses any other with `device_mismatch`), so with one the device is the token's.
public enum EvalDevice {
    /// What eval names when nothing says otherwise (the admin key may act as any device).
    public static let defaultID = "speakersync-eval"

    /// `given` when set; else, with a credential, the device `GET /v1/whoami` says it acts as (the
    /// admin key acts as none: the default); else the default.
    public static func resolve(given: String?, serverURL: String, token: String?, caFilePath: String?) throws -> String {
        if let given, !given.isEmpty { return given }
        guard let token, !token.isEmpty else { return defaultID }
        let identity = try CredentialIdentity.fetch(httpURL: CredentialIdentity.httpURL(forWebSocketURL: serverURL), token: token,
                                                    caFilePath: caFilePath)
        return identity.deviceID ?? defaultID
    }
}
