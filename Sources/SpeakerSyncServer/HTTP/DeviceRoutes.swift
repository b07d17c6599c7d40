import Foundation
import PluginHost
import SessionProtocol
import SpeakerSyncStore
import WebSocketTransport

/// What the device and speaker routes need from the store. Blocking; HTTP workers only.
protocol DeviceDirectory: Sendable {
    func deviceSettings(deviceID: String) throws -> DeviceSettingsRecord
    func setDeviceProvider(deviceID: String, provider: String?) throws -> DeviceSettingsRecord
    func devices(limit: Int) throws -> [DeviceRecord]
    func speakers(conversationID: String) throws -> [SessionSpeaker]
    func saveSpeakers(conversationID: String, _ speakers: [SessionSpeaker], relabel: (from: String, to: String)?) throws
}

/// `GET`/`PUT /v1/devices/{id}/settings` (the console's provider toggle, stored per device),
/// and `GET /v1/devices` (admin). (A speaker's rename or merge is `SessionRoutes`': a live session applies it.)
struct DeviceRoutes {
    let devices: any DeviceDirectory
    let providers: any ProviderHost
    let defaultProvider: String?
    let sessions: SessionManager?

    static func register(in table: inout RouteTable, services: APIServices) {
        let routes = Capability(services.devices.map {
            DeviceRoutes(devices: $0, providers: services.providers, defaultProvider: services.defaultProvider, sessions: services.sessions)
        }, absent: "this server keeps no device settings")
        table.add(.get, "/v1/devices", name: "list_devices", access: .admin(refusal: "only the admin key lists every device")) { _ in
            try routes.get().list()
        }
        table.add(.get, "/v1/devices/{device_id}/settings", name: "device_settings", access: .device(.deviceID)) { context in
            let device = try routes.get()
            return APIHandler.json(device.jsonObject(try device.devices.deviceSettings(deviceID: context.parameter(.deviceID))))
        }
        table.add(.put, "/v1/devices/{device_id}/settings", name: "device_settings", access: .device(.deviceID)) { context in
            try routes.get().setProvider(deviceID: try context.parameter(.deviceID), context.request)
        }
    }

    /// The device's provider choice, `{"provider":"<id>"}` or `{"provider":null}` (the server default).
    func setProvider(deviceID: String, _ request: HTTPRequest) throws -> HTTPResponse {
        guard case .object(let object)? = try? JSONParser().parse(bytes: request.body), let value = object["provider"] else {
            throw APIError(status: 400, code: "invalid_parameter", message: #"the body must be {"provider":"<id>"} or {"provider":null}"#)
        }
        let provider: String?
        switch value {
        case .null: provider = nil
        case .string(let id):
            let known = providers.providers.map(\.id)
            guard known.contains(id) else {
                throw APIError(status: 400, code: "unknown_provider", message: "provider '\(id)' is not available; available: \(known.sorted().joined(separator: ", "))")
            }
            provider = id
        default: throw APIError(status: 400, code: "invalid_parameter", message: "provider must be a provider id or null")
        }
        return APIHandler.json(jsonObject(try devices.setDeviceProvider(deviceID: deviceID, provider: provider)))
    }

    func list() throws -> HTTPResponse {
        APIHandler.json(["devices": try devices.devices(limit: 500).map { device -> [String: Any] in
            var object = jsonObject(device.settings)
            object["conversation_count"] = device.conversationCount
            object["last_seen"] = device.lastSeen.map(ConversationSummary.timestamp) as Any? ?? NSNull()
            return object
        }])
    }

    /// The provider a start without one gets now: the device's choice while it is loaded and
    /// available (as the session decides), else the server default.
    private func effectiveProvider(_ record: DeviceSettingsRecord) -> String? {
        if let chosen = record.provider, providers.isAvailable(chosen) { return chosen }
        return defaultProvider
    }

    private func jsonObject(_ record: DeviceSettingsRecord) -> [String: Any] {
        [
            "device_id": record.deviceID,
            "provider": record.provider as Any? ?? NSNull(),
            "effective_provider": effectiveProvider(record) as Any? ?? NSNull(),
            "updated_at": record.updatedAt.map(ConversationSummary.timestamp) as Any? ?? NSNull(),
        ]
    }

    static func speakersObject(_ conversationID: String, _ speakers: [SessionSpeaker], live: Bool) -> [String: Any] {
        [
            "conversation_id": conversationID,
            "live": live,
            "speakers": speakers.map { ["label": $0.label, "name": $0.name, "merged_into": $0.mergedInto as Any? ?? NSNull()] },
        ]
    }
}
