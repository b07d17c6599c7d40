import Foundation
import Logging
import SpeakerSyncStore
import WebSocketTransport

/// The admin's credential routes: device tokens (create, list, revoke) and the admin key's rotation.
/// A new secret is in the response body exactly once; lists show ids, labels and dates only.
struct TokenRoutes {
    let credentials: CredentialService
    let logger: Logger

    static func register(in table: inout RouteTable, services: APIServices, logger: Logger) {
        let routes = Capability(services.credentials.map { TokenRoutes(credentials: $0, logger: logger) },
                                absent: "this server keeps no credentials")
        let admin = RouteAccess.admin(refusal: "only the admin key manages credentials")
        table.add(.post, "/v1/devices/{device_id}/tokens", name: "create_device_token", access: admin) { try routes.get().create($0) }
        table.add(.get, "/v1/devices/{device_id}/tokens", name: "list_device_tokens", access: admin) { context in
            let credentials = try routes.get().credentials
            let deviceID = try context.parameter(.deviceID)
            try Self.validate(deviceID: deviceID)
            return APIHandler.json(["tokens": try credentials.tokens(deviceID: deviceID).map(Self.json)])
        }
        table.add(.delete, "/v1/devices/{device_id}/tokens/{token_id}", name: "revoke_device_token", access: admin) { context in
            let deviceID = try context.parameter(.deviceID)
            let tokenID = try context.parameter(.tokenID)
            guard try routes.get().credentials.revoke(deviceID: deviceID, tokenID: tokenID) else {
                throw APIError(status: 404, code: "token_not_found", message: "device '\(deviceID)' has no live token '\(tokenID)'")
            }
            return APIHandler.json(["revoked": tokenID, "device_id": deviceID])
        }
        table.add(.get, "/v1/tokens", name: "list_tokens", access: admin) { _ in
            APIHandler.json(["tokens": try routes.get().credentials.tokens(deviceID: nil).map(Self.json)])
        }
        table.add(.post, "/v1/admin/key", name: "rotate_admin_key", access: admin) { _ in
            let key = try routes.get().credentials.rotateAdminKey()
            return APIHandler.json(["admin_key": key.text, "key_id": key.id,
                                    "note": "the previous stored admin keys no longer work; SPEAKERSYNC_ADMIN_KEY, if set, still does"],
                                   status: 201, headers: [("cache-control", "no-store")])
        }
    }

    /// A new device token, shown once.
    func create(_ context: RouteContext) throws -> HTTPResponse {
        let deviceID = try context.parameter(.deviceID)
        try Self.validate(deviceID: deviceID)
        let label = context.request.query["label"] ?? ""
        guard label.unicodeScalars.count <= CredentialService.maxLabelLength, !label.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw APIError(status: 400, code: "invalid_parameter", message: "label must be at most \(CredentialService.maxLabelLength) printable characters")
        }
        let (token, record) = try credentials.createToken(deviceID: deviceID, label: label)
        var object = Self.json(record)
        object["token"] = token.text
        return APIHandler.json(object, status: 201, headers: [("cache-control", "no-store")])
    }

    /// Lengths count Unicode scalars, as JSON Schema's maxLength does (openapi.json): 128 characters of
    /// stacked combining marks would otherwise be thousands of scalars stored as one "character" each.
    static func validate(deviceID: String) throws {
        guard !deviceID.isEmpty, deviceID.unicodeScalars.count <= CredentialService.maxDeviceIDLength,
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
