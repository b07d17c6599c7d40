/// The HTTP routes served beside the WebSocket on the same port.
public enum APIRoute: Equatable, Sendable {
    /// GET /healthz: readiness (open; details with a credential).
    case health
    /// GET /livez: the process answers (open; never looks at PostgreSQL).
    case live
    /// GET /readyz: PostgreSQL answers and the server is not stopping (open).
    case ready
    case providers
    case listConversations
    case conversation(id: String)
    /// DELETE /v1/conversations/{id}: the conversation and everything stored with it.
    case deleteConversation(id: String)
    /// GET /v1/conversations/{id}/transcript[?format][&provider]: the transcript, or one labelling's.
    case transcript(id: String)
    /// GET /v1/conversations/{id}/labellings: every provider's stored labelling, with figures.
    case labellings(id: String)
    /// GET /v1/conversations/{id}/compare?providers=A,B[&reference=R]: pairwise DER and word agreement.
    case compare(id: String)
    /// PUT /v1/conversations/{id}/references/{name}: reference turns (an RTTM body) to compare against.
    case putReference(conversationID: String, name: String)
    /// GET /v1/conversations/{id}/audio[?format=wav|flac]: the stored audio (Range supported).
    case audio(id: String)
    /// POST /v1/conversations/{id}/diarize?provider=P (`{"options"}` body): re-diarize the stored audio (202).
    case startDiarization(id: String)
    /// GET /v1/diarization-jobs: recent re-diarizations.
    case listDiarizationJobs
    /// GET /v1/diarization-jobs/{id}: one re-diarization's progress and result.
    case diarizationJob(id: String)
    /// POST /v1/people?device_id&name[&provider]: enrol a person from a WAV body.
    case enrolPerson
    /// GET /v1/people?device_id
    case listPeople
    /// DELETE /v1/people/{id}
    case deletePerson(id: String)
    /// POST /v1/conversations/{id}/speakers/{label}/person[?name]: save a conversation's speaker as a person.
    case saveSpeakerAsPerson(conversationID: String, label: String)
    /// POST /v1/devices/{device_id}/tokens[?label]: a new device token, shown once (admin only).
    case createDeviceToken(deviceID: String)
    /// GET /v1/devices/{device_id}/tokens: the device's tokens without secrets (admin only).
    case listDeviceTokens(deviceID: String)
    /// DELETE /v1/devices/{device_id}/tokens/{token_id}: revokes at once (admin only).
    case revokeDeviceToken(deviceID: String, tokenID: String)
    /// GET /v1/tokens: every device's tokens (admin only).
    case listAllTokens
    /// POST /v1/admin/key: a new admin key; the previous stored ones stop working (admin only).
    case rotateAdminKey
    /// GET /metrics: Prometheus text exposition (admin only: server-wide figures).
    case metrics
    /// GET / and GET /console/{file}: the developer console's page and its scripts (open: they hold no data).
    case console(file: String)
    /// GET or PUT /v1/devices/{device_id}/settings: the device's provider choice (the console's toggle).
    case deviceSettings(deviceID: String)
    /// GET /v1/devices: every device with settings or conversations (admin only).
    case listDevices
    /// POST /v1/conversations/{id}/speakers/{label}: rename (`{"name"}`) or merge (`{"merge_into"}`).
    case changeSpeaker(conversationID: String, label: String)
    /// GET /v1/whoami: what the presented credential acts as (the console adapts to it).
    case whoami
    /// GET /v1/sessions: the sessions running on this server now, with their figures.
    case liveSessions
    /// GET /v1/sessions/{conversation_id}: one running session with its transcript as it is now.
    case liveSession(conversationID: String)
    /// POST /v1/test-recordings: synthesise a meeting and stream it through providers (202).
    case startTestRecording
    /// GET /v1/test-recordings: recent test recordings.
    case listTestRecordings
    /// GET /v1/test-recordings/{id}: one test recording's progress, truth and per-provider scores.
    case testRecording(id: String)

    /// A stable name for metrics labels (no ids: bounded cardinality).
    public var name: String {
        switch self {
        case .health: "health"
        case .live: "live"
        case .ready: "ready"
        case .providers: "providers"
        case .listConversations: "list_conversations"
        case .conversation: "conversation"
        case .deleteConversation: "delete_conversation"
        case .transcript: "transcript"
        case .labellings: "labellings"
        case .compare: "compare"
        case .putReference: "put_reference"
        case .audio: "audio"
        case .startDiarization: "start_diarization"
        case .listDiarizationJobs: "list_diarization_jobs"
        case .diarizationJob: "diarization_job"
        case .enrolPerson: "enrol_person"
        case .listPeople: "list_people"
        case .deletePerson: "delete_person"
        case .saveSpeakerAsPerson: "save_speaker_as_person"
        case .createDeviceToken: "create_device_token"
        case .listDeviceTokens: "list_device_tokens"
        case .revokeDeviceToken: "revoke_device_token"
        case .listAllTokens: "list_tokens"
        case .rotateAdminKey: "rotate_admin_key"
        case .metrics: "metrics"
        case .console: "console"
        case .whoami: "whoami"
        case .deviceSettings: "device_settings"
        case .listDevices: "list_devices"
        case .changeSpeaker: "change_speaker"
        case .liveSessions: "live_sessions"
        case .liveSession: "live_session"
        case .startTestRecording: "start_test_recording"
        case .listTestRecordings: "list_test_recordings"
        case .testRecording: "test_recording"
        }
    }

    /// Matches a request line; unknown paths are 404 and known paths with another method 405.
    public static func match(method: String, path: String) -> Result<APIRoute, APIError> {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map { String($0).removingPercentEncoding ?? String($0) }
        // An id decoded to NUL would reach PostgreSQL, which cannot hold it.
        if parts.contains(where: { $0.utf8.contains(0) }) {
            return .failure(APIError(status: 400, code: "invalid_text", message: "the path is not UTF-8 text without NUL characters; text that PostgreSQL cannot store is refused"))
        }
        let matched: (route: APIRoute, methods: [String])?
        switch parts.count {
        case 0: matched = (.console(file: ConsoleAssets.indexFile), ["GET", "HEAD"])
        case 2 where parts[0] == "console": matched = (.console(file: parts[1]), ["GET", "HEAD"])
        case 2 where parts == ["v1", "devices"]: matched = (.listDevices, ["GET", "HEAD"])
        case 4 where parts[0] == "v1" && parts[1] == "devices" && parts[3] == "settings":
            matched = (.deviceSettings(deviceID: parts[2]), ["GET", "HEAD", "PUT"])
        case 5 where parts[0] == "v1" && parts[1] == "conversations" && parts[3] == "speakers":
            matched = (.changeSpeaker(conversationID: parts[2], label: parts[4]), ["POST"])
        case 2 where parts == ["v1", "whoami"]: matched = (.whoami, ["GET", "HEAD"])
        case 2 where parts == ["v1", "sessions"]: matched = (.liveSessions, ["GET", "HEAD"])
        case 3 where parts[0] == "v1" && parts[1] == "sessions": matched = (.liveSession(conversationID: parts[2]), ["GET", "HEAD"])
        case 2 where parts == ["v1", "test-recordings"]:
            matched = method == "POST" ? (.startTestRecording, ["POST"]) : (.listTestRecordings, ["GET", "HEAD", "POST"])
        case 3 where parts[0] == "v1" && parts[1] == "test-recordings": matched = (.testRecording(id: parts[2]), ["GET", "HEAD"])
        case 1 where parts[0] == "healthz": matched = (.health, ["GET", "HEAD"])
        case 1 where parts[0] == "livez": matched = (.live, ["GET", "HEAD"])
        case 1 where parts[0] == "readyz": matched = (.ready, ["GET", "HEAD"])
        case 1 where parts[0] == "metrics": matched = (.metrics, ["GET", "HEAD"])
        case 2 where parts == ["v1", "providers"]: matched = (.providers, ["GET", "HEAD"])
        case 2 where parts == ["v1", "conversations"]: matched = (.listConversations, ["GET", "HEAD"])
        case 2 where parts == ["v1", "tokens"]: matched = (.listAllTokens, ["GET", "HEAD"])
        case 3 where parts == ["v1", "admin", "key"]: matched = (.rotateAdminKey, ["POST"])
        case 4 where parts[0] == "v1" && parts[1] == "devices" && parts[3] == "tokens":
            matched = method == "POST" ? (.createDeviceToken(deviceID: parts[2]), ["POST"]) : (.listDeviceTokens(deviceID: parts[2]), ["GET", "HEAD", "POST"])
        case 5 where parts[0] == "v1" && parts[1] == "devices" && parts[3] == "tokens":
            matched = (.revokeDeviceToken(deviceID: parts[2], tokenID: parts[4]), ["DELETE"])
        case 2 where parts == ["v1", "people"]:
            matched = method == "POST" ? (.enrolPerson, ["POST"]) : (.listPeople, ["GET", "HEAD", "POST"])
        case 3 where parts[0] == "v1" && parts[1] == "people": matched = (.deletePerson(id: parts[2]), ["DELETE"])
        case 3 where parts[0] == "v1" && parts[1] == "conversations":
            matched = method == "DELETE" ? (.deleteConversation(id: parts[2]), ["DELETE"]) : (.conversation(id: parts[2]), ["GET", "HEAD", "DELETE"])
        case 4 where parts[0] == "v1" && parts[1] == "conversations" && parts[3] == "transcript": matched = (.transcript(id: parts[2]), ["GET", "HEAD"])
        case 4 where parts[0] == "v1" && parts[1] == "conversations" && parts[3] == "labellings": matched = (.labellings(id: parts[2]), ["GET", "HEAD"])
        case 4 where parts[0] == "v1" && parts[1] == "conversations" && parts[3] == "compare": matched = (.compare(id: parts[2]), ["GET", "HEAD"])
        case 4 where parts[0] == "v1" && parts[1] == "conversations" && parts[3] == "audio": matched = (.audio(id: parts[2]), ["GET", "HEAD"])
        case 4 where parts[0] == "v1" && parts[1] == "conversations" && parts[3] == "diarize": matched = (.startDiarization(id: parts[2]), ["POST"])
        case 2 where parts == ["v1", "diarization-jobs"]: matched = (.listDiarizationJobs, ["GET", "HEAD"])
        case 3 where parts[0] == "v1" && parts[1] == "diarization-jobs": matched = (.diarizationJob(id: parts[2]), ["GET", "HEAD"])
        case 5 where parts[0] == "v1" && parts[1] == "conversations" && parts[3] == "references":
            matched = (.putReference(conversationID: parts[2], name: parts[4]), ["PUT"])
        case 6 where parts[0] == "v1" && parts[1] == "conversations" && parts[3] == "speakers" && parts[5] == "person":
            matched = (.saveSpeakerAsPerson(conversationID: parts[2], label: parts[4]), ["POST"])
        default: matched = nil
        }
        guard let matched else {
            return .failure(APIError(status: 404, code: "not_found", message: "no route for \(path)"))
        }
        guard matched.methods.contains(method) else {
            let allowed = matched.methods.filter { $0 != "HEAD" }.joined(separator: " or ")
            return .failure(APIError(status: 405, code: "method_not_allowed", message: "\(method) is not allowed on \(path); use \(allowed)"))
        }
        return .success(matched.route)
    }
}

/// An HTTP error as clients receive it: `{"error":{"code":"…","message":"…"}}` with a 4xx/5xx status.
public struct APIError: Error, Equatable, Sendable {
    public var status: Int
    public var code: String
    public var message: String

    public init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    public var jsonObject: [String: Any] { ["error": ["code": code, "message": message]] }

    /// With the request's id, which the server's log carries too.
    public func jsonObject(requestID: String) -> [String: Any] {
        ["error": ["code": code, "message": message, "request_id": requestID]]
    }
}
