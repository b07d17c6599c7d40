import Foundation
import PluginHost
import WebSocketTransport

/// `POST /v1/test-recordings` (a synthetic meeting, or an uploaded recording), `GET
/// /v1/test-recordings[/{id}]`: the console's "Run test recording".
struct TestRecordingRoutes {
    let service: TestRecordingService
    let providers: any ProviderHost
    let defaultProvider: String?
    /// Test recordings one device may run at once (`JobShareConfig`); the admin is not held to it.
    let sharePerDevice: Int

    static func register(in table: inout RouteTable, services: APIServices) {
        let routes = Capability(services.testRecordings.map {
            TestRecordingRoutes(service: $0, providers: services.providers, defaultProvider: services.defaultProvider,
                                sharePerDevice: services.jobShares.testRecordingsPerDevice)
        }, absent: "this server runs no test recordings")
        table.add(.post, "/v1/test-recordings", name: "start_test_recording", access: .credential) { try routes.get().start($0) }
        table.add(.get, "/v1/test-recordings", name: "list_test_recordings", access: .credential) { context in
            APIHandler.json(["test_recordings": try routes.get().service.list(visibleTo: context.principal)])
        }
        table.add(.get, "/v1/test-recordings/{id}", name: "test_recording", access: .credential) { context in
            let id = try context.parameter(.id)
            guard let report = try routes.get().service.report(id: id, visibleTo: context.principal) else {
                throw APIError(status: 404, code: "test_recording_not_found", message: "no test recording with id '\(id)'")
            }
            return APIHandler.json(report)
        }
    }

    /// A JSON body asks for a synthetic meeting; a `multipart/form-data` body uploads a recording
    /// (`UploadedRecording`: a WAV, optionally its RTTM, and the same settings as form fields).
    func start(_ context: RouteContext) throws -> HTTPResponse {
        let request = context.request
        let principal = try context.principal
        let known = Set(providers.providers.map(\.id))
        let parsed: TestRecordingRequest
        var upload: UploadedRecording?
        if let boundary = MultipartForm.boundary(contentType: request.headers["content-type"] ?? "") {
            (parsed, upload) = try UploadedRecording.parse(request.body, boundary: boundary, principal: principal, knownProviders: known,
                                                           defaultProvider: defaultProvider)
        } else {
            parsed = try TestRecordingRequest.parse(
                request.body, principal: principal, knownProviders: known, defaultProvider: defaultProvider,
                randomSeed: { UInt64.random(in: 1 ... 999_999) })
        }
        // The sessions act as the caller: they can do what the caller can.
        let report = try service.start(parsed, upload: upload, principal: principal, address: request.remoteAddress,
                                       perDeviceLimit: principal.deviceID == nil ? nil : sharePerDevice)
        let id = report["id"] as? String ?? ""
        return APIHandler.json(report, status: 202, headers: [("location", "/v1/test-recordings/\(id)")])
    }
}
