import Foundation
import Logging
import SpeakerSyncStore
import WebSocketTransport

/// The admin's credential routes: device tokens (create, list, revoke) and the admin key's rotation.
/// A new secret is in the response body exactly once; lists show ids, labels and dates only.
struct TokenRoutes {
    let credentials: CredentialService
    let logger: Logger

    func answer(_ route: APIRoute, _ request: HTTPRequest) throws -> HTTPResponse {
        switch route {
        case .createDeviceToken(let deviceID):
            try Self.validate(deviceID: deviceID)
            let label = request.query["label"] ?? ""
            guard label.count <= CredentialService.maxLabelLength, !label.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw APIError(status: 400, code: "invalid_parameter", message: "label must be at most \(CredentialService.maxLabelLength) printable characters")
            }
            let (token, record) = try credentials.createToken(deviceID: deviceID, label: label)
            var object = Self.json(record)
            object["token"] = token.text
            return APIHandler.json(object, status: 201, headers: [("cache-control", "no-store")])
        case .listDeviceTokens(let deviceID):
            try Self.validate(deviceID: deviceID)
            return APIHandler.json(["tokens": try credentials.tokens(deviceID: deviceID).map(Self.json)])
        case .listAllTokens:
            return APIHandler.json(["tokens": try credentials.tokens(deviceID: nil).map(Self.json)])
        case .revokeDeviceToken(let deviceID, let tokenID):
            guard try credentials.revoke(deviceID: deviceID, tokenID: tokenID) else {
                throw APIError(status: 404, code: "token_not_found", message: "device '\(deviceID)' has no live token '\(tokenID)'")
            }
            return APIHandler.json(["revoked": tokenID, "device_id": deviceID])
        case .rotateAdminKey:
            let key = try credentials.rotateAdminKey()
            return APIHandler.json(["admin_key": key.text, "key_id": key.id,
                                    "note": "the previous stored admin keys no longer work; SPEAKERSYNC_ADMIN_KEY, if set, still does"],
                                   status: 201, headers: [("cache-control", "no-store")])
        default:
            throw APIError(status: 404, code: "not_found", message: "no such token route")
        }
    }

    static func validate(deviceID: String) throws {
        guard !deviceID.isEmpty, deviceID.count <= CredentialService.maxDeviceIDLength,
              !deviceID.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "/" }) else {
            throw APIError(status: 400, code: "invalid_parameter", message: "device_id must be 1 to \(CredentialService.maxDeviceIDLength) printable characters without '/'")
        }
    }

    static func json(_ record: DeviceTokenRecord) -> [String: Any] {
        ["token_id": record.tokenID, "device_id": record.deviceID, "label": record.label,
         "created_at": ConversationSummary.timestamp(record.createdAt),
         "revoked_at": record.revokedAt.map(ConversationSummary.timestamp) as Any? ?? NSNull()]
    }
}
