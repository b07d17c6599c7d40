import Dispatch
import Foundation
import TranscriptMerge
import Logging
import PluginHost
import PostgresClient
import SpeakerSyncStore
import WebSocketTransport

/// Serves the HTTP routes. The lws service thread hands each request over; the work (PostgreSQL
/// reads, rendering) runs on a worker queue and the response goes back through `respond`.
final class APIHandler: HTTPHandler, Sendable {
    private let reader: any ConversationReader
    private let voices: (any VoiceDirectory)?
    private let providers: any ProviderHost
    private let defaultProvider: String?
    /// How providers run (`process`, `session`, `none`), as `/v1/providers` reports it.
    private let isolation: String
    private let logger: Logger
    /// Who may do what; `AccessGate(config: AccessConfig(mode: .off), …)` lets everyone be admin.
    private let gate: AccessGate
    /// Token and admin-key routes; nil on servers without credential storage (they answer 404).
    private let credentials: CredentialService?
    private let metrics: ServerMetrics
    /// The running sessions, for the console (nil: none are listed).
    private let sessions: SessionManager?
    private let testRecordings: TestRecordingService?
    /// Device settings and speaker corrections; nil on servers without them (they answer 404).
    private let devices: (any DeviceDirectory)?
    /// Stored labellings to compare and references to upload; nil on servers without them (404).
    private let labellingDirectory: (any LabellingDirectory)?
    private let eraser: (any ConversationEraser)?
    private let rediarization: DiarizationJobService?
    /// What one device may hold of the job pools (the admin: the pools only).
    private let jobShares: JobShareConfig
    private let merge: MergeConfig
    /// PostgreSQL's state as the background probe last saw it (nil: checked on the spot).
    private let readiness: ReadinessProbe?
    private let workers = DispatchQueue(label: "speakersync.http", attributes: .concurrent)
    static let maxPageSize = 200

    /// `services`: what the routes read and change; `gate`: who may do what; `metrics`: the counters
    /// every request adds to.
    init(services: APIServices, gate: AccessGate, metrics: ServerMetrics = ServerMetrics(), logger: Logger) {
        reader = services.reader
        voices = services.voices
        providers = services.providers
        defaultProvider = services.defaultProvider
        isolation = services.isolation
        credentials = services.credentials
        sessions = services.sessions
        testRecordings = services.testRecordings
        devices = services.devices
        labellingDirectory = services.labellings
        eraser = services.eraser
        rediarization = services.rediarization
        jobShares = services.jobShares
        merge = services.merge
        readiness = services.readiness
        self.gate = gate
        self.metrics = metrics
        self.logger = logger
    }

    /// Credentials and rate limits, checked by the transport before a body is read.
    func admit(_ head: HTTPRequest) -> HTTPResponse? {
        let refusal = gate.admit(head)
        if let refusal { count(APIRoute.match(method: head.method, path: head.path), status: refusal.status) }
        return refusal
    }

    private func count(_ matched: Result<APIRoute, APIError>, status: Int) {
        let route = (try? matched.get())?.name ?? "unmatched"
        metrics.increment("speakersync_http_requests_total", ["route": route, "status": String(status)])
    }

    func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let requestID = RequestID.make()
        let respond: @Sendable (HTTPResponse) -> Void = { response in
            var response = response
            response.headers.append(("x-request-id", requestID))
            respond(response)
        }
        let matched = APIRoute.match(method: request.method, path: request.path)
        // Probes answer here, on the service thread, from memory: within a second whatever
        // PostgreSQL or the worker threads are doing. A credential's details wait for a worker.
        if case .success(let route) = matched, let response = probe(route, request) {
            count(matched, status: response.status)
            respond(response)
            return
        }
        workers.async { [self] in
            let response: HTTPResponse
            do {
                try Self.refuseInvalidText(request)
                switch matched {
                case .failure(let error): throw error
                case .success(.console(let file)):
                    // The page and its scripts hold no data; the page signs in to call everything else.
                    response = ConsoleAssets.response(file: file)
                case .success(.health):
                    let principal = try? gate.principal(httpHeaders: request.headers).get()
                    // Worker pids, plugin paths and server-wide memory are the operator's: a device learns up or not.
                    response = try health(detailed: principal?.isAdmin == true)
                case .success(let route) where SessionRoutes.answers(route):
                    let principal = try gate.principal(httpHeaders: request.headers).get()
                    try answerLater(route, request, as: principal) { [self] result in
                        let response: HTTPResponse
                        switch result {
                        case .success(let answered): response = answered
                        case .failure(let error): response = errorResponse(error, request, requestID: requestID)
                        }
                        count(matched, status: response.status)
                        respond(response)
                    }
                    return
                case .success(let route):
                    // Checked again here: admission ran before the body, and a revocation may have come between.
                    let principal = try gate.principal(httpHeaders: request.headers).get()
                    response = try answer(route, request, as: principal)
                }
            } catch {
                response = errorResponse(error, request, requestID: requestID)
            }
            count(matched, status: response.status)
            respond(response)
        }
    }

    /// A route's error as its response: an `APIError` as it says; anything else logged under the
    /// request id, the client getting a stable code and the id to quote (never SQL state,
    /// connection text or socket paths).
    private func errorResponse(_ error: any Error, _ request: HTTPRequest, requestID: String) -> HTTPResponse {
        if let error = error as? APIError {
            return Self.json(error.jsonObject(requestID: requestID), status: error.status,
                             headers: error.status == 401 ? [("www-authenticate", #"Bearer realm="speakersync""#)] : [])
        }
        let failure = Self.unexpected(error)
        logger.error("HTTP request failed", metadata: ["path": "\(Redaction.path(request.path))", "request_id": "\(requestID)",
                                                       "error": "\(error)"])
        return Self.json(failure.jsonObject(requestID: requestID), status: failure.status,
                         headers: failure.status == 503 ? [("retry-after", "2")] : [])
    }

    /// The routes a running session answers (`SessionRoutes`): handed over with the principal, and
    /// answered from the session's callback, so this worker does not wait for a session's queue.
    private func answerLater(_ route: APIRoute, _ request: HTTPRequest, as principal: Principal,
                             reply: @escaping @Sendable (Result<HTTPResponse, any Error>) -> Void) throws {
        let routes = SessionRoutes(sessions: sessions, devices: devices, workers: workers)
        switch route {
        case .liveSessions:
            routes.list(as: principal, reply: reply)
        case .liveSession(let id):
            routes.one(conversationID: id, as: principal, reply: reply)
        case .changeSpeaker(let id, let label):
            _ = try visibleConversation(id, as: principal)
            routes.changeSpeaker(conversationID: id, label: label, request, reply: reply)
        default:
            throw APIError(status: 404, code: "not_found", message: "no such route")
        }
    }

    /// An error no route turned into an `APIError`: the database being unavailable, or a bug.
    static func unexpected(_ error: any Error) -> APIError {
        if error is PGError || error is StoreError {
            return APIError(status: 503, code: "database_unavailable", message: "the database is unavailable; retry shortly")
        }
        return APIError(status: 500, code: "internal_error", message: "the request failed on the server")
    }

    /// Text that cannot be stored, anywhere in the request (query, path, a JSON or RTTM body): 400
    /// `invalid_text` naming where, before any route sees it.
    static func refuseInvalidText(_ request: HTTPRequest) throws(APIError) {
        if let name = request.invalidTextParameters.sorted().first {
            let place = name == "path" ? "the path" : "query parameter \"\(name)\""
            throw APIError(status: 400, code: "invalid_text", message: "\(place) is not UTF-8 text without NUL characters; text that PostgreSQL cannot store is refused")
        }
        guard !request.body.isEmpty, let kind = BodyText.kind(request) else { return }
        if let problem = BodyText.problem(request.body, kind: kind) {
            throw APIError(status: 400, code: "invalid_text", message: "the body \(problem); text that PostgreSQL cannot store is refused")
        }
    }

    /// `/livez`, `/readyz`, and `/healthz` without a credential: answered from memory. nil for
    /// other routes (and for `/healthz` with a credential, whose details are read on a worker).
    private func probe(_ route: APIRoute, _ request: HTTPRequest) -> HTTPResponse? {
        switch route {
        case .live:
            return Self.json(["status": "ok"])
        case .ready:
            return readinessResponse()
        case .health where request.headers["authorization"] == nil:
            return readinessResponse()
        default:
            return nil
        }
    }

    /// 200 when ready, 503 with the reason otherwise (Kubernetes' readiness convention).
    private func readinessResponse() -> HTTPResponse {
        guard let readiness else {
            // Servers built without a probe (tests) check on the spot, with the connection's deadlines.
            do {
                try reader.checkHealth()
                return Self.json(["status": "ok", "database": "ok"])
            } catch {
                return Self.json(["status": "unavailable", "database": "unavailable"], status: 503, headers: [("retry-after", "2")])
            }
        }
        let status = readiness.status
        var body: [String: Any] = ["status": status.ready ? "ok" : "unavailable", "database": status.database]
        if status.draining { body["status"] = "stopping" }
        return Self.json(body, status: status.ready ? 200 : 503, headers: status.ready ? [] : [("retry-after", "2")])
    }

    private func health(detailed: Bool) throws -> HTTPResponse {
        let readiness = readinessResponse()
        guard detailed, readiness.status == 200 else { return readiness }
        var health: [String: Any] = ["status": "ok", "database": "ok"]
        let memory = residentMemory()
        if let total = memory.total { health["resident_bytes"] = total }
        if let server = memory.server { health["server_resident_bytes"] = server }
        health["provider_workers"] = memory.workers.map { worker, resident -> [String: Any] in
            ["pid": Int(worker.processID), "plugin": worker.pluginPath, "sessions": worker.sessionCount,
             "resident_bytes": resident as Any? ?? NSNull()]
        }
        return Self.json(health)
    }

    /// Resident memory of this process and of each provider worker (nil where it cannot be read), and
    /// their sum: the workers count too, since that is where sessions' models and state live.
    private func residentMemory() -> (server: Int?, workers: [(ProviderWorkerInfo, Int?)], total: Int?) {
        let server = ProcessMemory.residentBytes()
        let workers = providers.workers.map { ($0, ProcessMemory.residentBytes(processID: $0.processID)) }
        let readable = ([server] + workers.map(\.1)).compactMap { $0 }
        return (server, workers, readable.isEmpty ? nil : readable.reduce(0, +))
    }

    /// The device a request may act on: a device token's own (a different `device_id` parameter is
    /// refused), or for the admin the `device_id` parameter (nil when absent: every device).
    static func scopedDevice(_ principal: Principal, requested: String?) throws -> String? {
        guard let own = principal.deviceID else { return requested.flatMap { $0.isEmpty ? nil : $0 } }
        if let requested, !requested.isEmpty, requested != own {
            throw APIError(status: 403, code: "device_mismatch", message: "this token acts only as device '\(own)'")
        }
        return own
    }

    /// A conversation the principal may see; another device's answers exactly like a missing one.
    private func visibleConversation(_ id: String, as principal: Principal) throws -> ConversationSummary {
        guard let summary = try reader.conversation(id: id),
              principal.deviceID == nil || principal.deviceID == summary.deviceID else { throw Self.notFound(id) }
        return summary
    }

    private func requireAdmin(_ principal: Principal) throws -> CredentialService {
        guard principal.isAdmin else {
            throw APIError(status: 403, code: "admin_required", message: "only the admin key manages credentials")
        }
        guard let credentials else { throw APIError(status: 404, code: "not_found", message: "this server keeps no credentials") }
        return credentials
    }

    private func answer(_ route: APIRoute, _ request: HTTPRequest, as principal: Principal) throws -> HTTPResponse {
        switch route {
        case .health:
            return try health(detailed: principal.isAdmin)
        case .live, .ready:
            return probe(route, request) ?? Self.json(["status": "ok"])
        case .metrics:
            // Server-wide figures (every device's sessions, providers, jobs) are the operator's.
            guard principal.isAdmin else {
                throw APIError(status: 403, code: "admin_required", message: "/metrics is for the admin key; device tokens cannot read server-wide figures")
            }
            metrics.set(gauge: "speakersync_resident_memory_bytes", [:], Double(residentMemory().total ?? 0))
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(metrics.render().utf8))
        case .providers:
            return Self.json([
                "providers": providers.providers.map { provider -> [String: Any] in
                    var object: [String: Any] = [
                        "id": provider.id, "name": provider.name, "version": provider.version,
                        "description": provider.description, "latency_class": provider.latencyClass.rawValue,
                        "licence": provider.licence, "requirements": provider.requirements, "measured": provider.measured,
                    ]
                    switch provider.kind {
                    case .builtin: object["kind"] = "builtin"
                    case .plugin(let path): object["kind"] = "plugin"; object["path"] = path
                    }
                    switch providers.status(of: provider.id) {
                    case .available:
                        object["available"] = true
                    case .unavailable(let reason, let retryAfter):
                        object["available"] = false
                        object["unavailable_reason"] = reason
                        if let retryAfter { object["retry_after_seconds"] = Int(retryAfter.rounded(.up)) }
                    }
                    return object
                },
                "isolation": isolation,
                "failed": providers.failures.map { failure -> [String: Any] in
                    ["path": failure.path, "code": failure.code.rawValue, "reason": failure.message]
                },
            ])
        case .listConversations:
            var limit = 50
            if let text = request.query["limit"] {
                guard let value = Int(text), (1...Self.maxPageSize).contains(value) else {
                    throw APIError(status: 400, code: "invalid_parameter", message: "limit must be a whole number from 1 to \(Self.maxPageSize)")
                }
                limit = value
            }
            let device = try Self.scopedDevice(principal, requested: request.query["device_id"])
            let page = try reader.listConversations(deviceID: device, limit: limit, cursor: request.query["cursor"])
            return Self.json([
                "conversations": page.conversations.map(\.jsonObject),
                "next_cursor": page.nextCursor as Any? ?? NSNull(),
            ])
        case .conversation(let id):
            return Self.json(try visibleConversation(id, as: principal).jsonObject)
        case .deleteConversation(let id):
            _ = try visibleConversation(id, as: principal)
            guard let eraser else { throw APIError(status: 404, code: "not_found", message: "this server deletes no conversations") }
            // A session writing it would store it again: it must end first.
            if sessions?.runner(conversationID: id) != nil {
                throw APIError(status: 409, code: "conversation_active", message: "conversation \(id) is being recorded; delete it once its session has ended")
            }
            guard try eraser.deleteConversation(id: id) else { throw Self.notFound(id) }
            logger.info("conversation deleted", metadata: ["conversation_id": "\(id)", "by": "\(principal.deviceID ?? "admin")"])
            return Self.json(["deleted": id])
        case .transcript(let id):
            let formatName = request.query["format"] ?? "json"
            guard let format = TranscriptFormat(rawValue: formatName) else {
                throw APIError(status: 400, code: "invalid_parameter", message: "format must be one of \(TranscriptFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            _ = try visibleConversation(id, as: principal)
            let document: TranscriptDocument
            if let provider = request.query["provider"], !provider.isEmpty {
                guard let labelled = try reader.transcript(id: id, labelling: provider) else {
                    let names = try reader.labellings(conversationID: id).map(\.name)
                    throw APIError(status: 404, code: "labelling_not_found",
                                   message: "conversation \(id) has no labelling by \(provider); it has: \(names.isEmpty ? "none" : names.joined(separator: ", "))")
                }
                document = labelled
            } else {
                guard let stored = try reader.transcript(id: id) else { throw Self.notFound(id) }
                document = stored
            }
            return HTTPResponse(status: 200, contentType: format.contentType, body: Array(document.rendered(as: format).utf8))
        case .compare(let id):
            let conversation = try visibleConversation(id, as: principal)
            return try compareRoutes().compare(conversation: conversation, request)
        case .startDiarization(let id):
            let conversation = try visibleConversation(id, as: principal)
            guard let rediarization else { throw APIError(status: 404, code: "not_found", message: "this server re-diarizes nothing") }
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
            let job = try rediarization.start(conversationID: id, deviceID: conversation.deviceID, provider: provider, optionsJSON: options,
                                              perDeviceLimit: principal.deviceID == nil ? nil : jobShares.rediarizationsPerDevice)
            return Self.json(job.jsonObject, status: 202, headers: [("Location", "/v1/diarization-jobs/\(job.id)")])
        case .listDiarizationJobs:
            guard let rediarization else { throw APIError(status: 404, code: "not_found", message: "this server re-diarizes nothing") }
            return Self.json(["jobs": try rediarization.list(deviceID: principal.deviceID).map(\.jsonObject)])
        case .diarizationJob(let jobID):
            guard let job = try rediarization?.job(jobID, deviceID: principal.deviceID) else {
                throw APIError(status: 404, code: "job_not_found", message: "no re-diarization job \(jobID)")
            }
            return Self.json(job.jsonObject)
        case .audio(let id):
            _ = try visibleConversation(id, as: principal)
            guard let labellingDirectory else { throw APIError(status: 404, code: "not_found", message: "this server keeps no audio") }
            return try AudioRoute(directory: labellingDirectory).answer(conversationID: id, request)
        case .putReference(let id, let name):
            _ = try visibleConversation(id, as: principal)
            return try compareRoutes().putReference(conversationID: id, name: name, request)
        case .labellings(let id):
            _ = try visibleConversation(id, as: principal)
            return Self.json(["conversation_id": id, "labellings": try reader.labellings(conversationID: id).map(\.jsonObject)])
        case .enrolPerson, .listPeople, .deletePerson, .saveSpeakerAsPerson:
            guard let voices else { throw APIError(status: 404, code: "not_found", message: "this server keeps no people") }
            return try PeopleRoutes(voices: voices, reader: reader, providers: providers, defaultProvider: defaultProvider, logger: logger)
                .answer(route, request, as: principal)
        case .createDeviceToken, .listDeviceTokens, .revokeDeviceToken, .listAllTokens, .rotateAdminKey:
            return try TokenRoutes(credentials: try requireAdmin(principal), logger: logger).answer(route, request)
        case .console(let file):
            return ConsoleAssets.response(file: file)
        case .deviceSettings(let deviceID):
            return try deviceRoutes().settings(deviceID, request, as: principal)
        case .listDevices:
            return try deviceRoutes().list(as: principal)
        case .whoami:
            return Self.json([
                "role": principal.isAdmin ? "admin" : "device",
                "device_id": principal.deviceID as Any? ?? NSNull(),
                "auth": gate.config.mode == .required ? "required" : "off",
                "default_provider": defaultProvider as Any? ?? NSNull(),
            ])
        case .liveSessions, .liveSession, .changeSpeaker:
            throw APIError(status: 500, code: "internal_error", message: "answered by SessionRoutes")
        case .startTestRecording, .listTestRecordings, .testRecording:
            guard let testRecordings else { throw APIError(status: 404, code: "not_found", message: "this server runs no test recordings") }
            return try TestRecordingRoutes(service: testRecordings, providers: providers, defaultProvider: defaultProvider,
                                           sharePerDevice: jobShares.testRecordingsPerDevice)
                .answer(route, request, as: principal)
        }
    }

    private func deviceRoutes() throws -> DeviceRoutes {
        guard let devices else { throw APIError(status: 404, code: "not_found", message: "this server keeps no device settings") }
        return DeviceRoutes(devices: devices, providers: providers, defaultProvider: defaultProvider, sessions: sessions)
    }

    static func notFound(_ id: String) -> APIError {
        APIError(status: 404, code: "conversation_not_found", message: "no conversation with id '\(id)'")
    }

    private func compareRoutes() throws -> CompareRoutes {
        guard let labellingDirectory else { throw APIError(status: 404, code: "not_found", message: "this server keeps no labellings") }
        return CompareRoutes(directory: labellingDirectory, merge: merge)
    }

    static func json(_ object: [String: Any], status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return HTTPResponse(status: status, contentType: "application/json", headers: headers, body: Array(data))
    }
}
