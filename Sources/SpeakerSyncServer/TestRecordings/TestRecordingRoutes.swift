import Foundation
import PluginHost
import WebSocketTransport

/// `POST /v1/test-recordings`, `GET /v1/test-recordings[/{id}]`: the console's "Run test recording".
struct TestRecordingRoutes {
    let service: TestRecordingService
    let providers: any ProviderHost
    let defaultProvider: String?
    /// Test recordings one device may run at once (`JobShareConfig`); the admin is not held to it.
    let sharePerDevice: Int

    func answer(_ route: APIRoute, _ request: HTTPRequest, as principal: Principal) throws -> HTTPResponse {
        switch route {
        case .startTestRecording:
            let known = Set(providers.providers.map(\.id))
            let parsed = try TestRecordingRequest.parse(
                request.body, principal: principal, knownProviders: known, defaultProvider: defaultProvider,
                randomSeed: { UInt64.random(in: 1 ... 999_999) })
            // The sessions act as the caller: they can do what the caller can.
            let report = try service.start(parsed, principal: principal, address: request.remoteAddress,
                                           perDeviceLimit: principal.deviceID == nil ? nil : sharePerDevice)
            let id = report["id"] as? String ?? ""
            return APIHandler.json(report, status: 202, headers: [("location", "/v1/test-recordings/\(id)")])
        case .listTestRecordings:
            return APIHandler.json(["test_recordings": try service.list(visibleTo: principal)])
        case .testRecording(let id):
            guard let report = try service.report(id: id, visibleTo: principal) else {
                throw APIError(status: 404, code: "test_recording_not_found", message: "no test recording with id '\(id)'")
            }
            return APIHandler.json(report)
        default:
            throw APIError(status: 404, code: "not_found", message: "no route")
        }
    }
}
