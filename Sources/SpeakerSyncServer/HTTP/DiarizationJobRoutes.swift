import Foundation
import WebSocketTransport

/// Re-diarizing stored audio: `POST /v1/conversations/{id}/diarize?provider=P` (`{"options"}` body,
/// 202), `GET /v1/diarization-jobs` (recent ones) and `GET /v1/diarization-jobs/{id}` (progress and result).
struct DiarizationJobRoutes {
    let rediarization: Capability<DiarizationJobService>
    /// What one device may hold of the job pools (the admin: the pools only).
    let jobShares: JobShareConfig

    static func register(in table: inout RouteTable, services: APIServices) {
        let routes = DiarizationJobRoutes(rediarization: Capability(services.rediarization, absent: "this server re-diarizes nothing"),
                                          jobShares: services.jobShares)
        table.add(.post, "/v1/conversations/{id}/diarize", name: "start_diarization", access: .conversation(.id)) { try routes.start($0) }
        table.add(.get, "/v1/diarization-jobs", name: "list_diarization_jobs", access: .credential) { context in
            APIHandler.json(["jobs": try routes.rediarization.get().list(deviceID: context.principal.deviceID).map(\.jsonObject)])
        }
        table.add(.get, "/v1/diarization-jobs/{id}", name: "diarization_job", access: .credential) { context in
            let jobID = try context.parameter(.id)
            guard let job = try routes.rediarization.value?.job(jobID, deviceID: context.principal.deviceID) else {
                throw APIError(status: 404, code: "job_not_found", message: "no re-diarization job \(jobID)")
            }
            return APIHandler.json(job.jsonObject)
        }
    }

    func start(_ context: RouteContext) throws -> HTTPResponse {
        let conversation = try context.conversation
        let rediarization = try self.rediarization.get()
        let request = context.request
        guard let provider = request.query["provider"], !provider.isEmpty else {
            throw APIError(status: 400, code: "invalid_parameter", message: "provider is required: POST …/diarize?provider=P")
        }
        var options = "{}"
        if !request.body.isEmpty {
            guard let body = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any] else {
                throw APIError(status: 400, code: "invalid_body", message: "the body must be a JSON object, e.g. {\"options\":{\"num_speakers\":2}}")
            }
            if let given = body["options"] {
                guard let object = given as? [String: Any],
                      let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
                    throw APIError(status: 400, code: "invalid_body", message: "options must be an object")
                }
                options = String(decoding: data, as: UTF8.self)
            }
        }
        let principal = try context.principal
        let job = try rediarization.start(conversationID: try context.parameter(.id), deviceID: conversation.deviceID, provider: provider, optionsJSON: options,
                                          perDeviceLimit: principal.deviceID == nil ? nil : jobShares.rediarizationsPerDevice)
        return APIHandler.json(job.jsonObject, status: 202, headers: [("Location", "/v1/diarization-jobs/\(job.id)")])
    }
}
