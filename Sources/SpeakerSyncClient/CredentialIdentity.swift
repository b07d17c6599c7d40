import Foundation

/// What a credential acts as on a server, from `GET /v1/whoami`: the admin, or one device.
public struct CredentialIdentity: Sendable, Equatable {
    /// "admin" or "device".
    public var role: String
    /// The device a device token acts as; nil for the admin key (and for `--auth off`).
    public var deviceID: String?

    public init(role: String, deviceID: String?) {
        self.role = role
        self.deviceID = deviceID
    }

    /// Asks the server at `httpURL` (`http[s]://host:port`) what `token` acts as. Throws with the
    /// server's own words when it refuses the credential (401) or cannot be reached.
    public static func fetch(httpURL: String, token: String?, caFilePath: String? = nil, timeoutSeconds: Int = 30) throws -> CredentialIdentity {
        let response: SimpleHTTPResponse
        do {
            response = try SimpleHTTPClient.get(httpURL + "/v1/whoami", token: token, timeoutSeconds: timeoutSeconds, caFilePath: caFilePath)
        } catch {
            throw SimpleHTTPError(description: "cannot ask \(httpURL) what the credential acts as: \(error)")
        }
        let body = response.json() as? [String: Any]
        guard response.status == 200, let role = body?["role"] as? String else {
            let error = body?["error"] as? [String: Any]
            let detail = [error?["code"] as? String, error?["message"] as? String].compactMap { $0 }.joined(separator: ": ")
            throw SimpleHTTPError(description: "GET /v1/whoami answered HTTP \(response.status)\(detail.isEmpty ? "" : " (\(detail))")")
        }
        return CredentialIdentity(role: role, deviceID: body?["device_id"] as? String)
    }

    /// `ws[s]://host:port[/path]` → `http[s]://host:port[/path]` (HTTP is served on the WebSocket's port).
    public static func httpURL(forWebSocketURL url: String) -> String {
        if url.hasPrefix("wss://") { return "https://" + url.dropFirst("wss://".count) }
        if url.hasPrefix("ws://") { return "http://" + url.dropFirst("ws://".count) }
        return url
    }
}
