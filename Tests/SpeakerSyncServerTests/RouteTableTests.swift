import Dispatch
import Foundation
import Logging
import PluginHost
import SpeakerSyncStore
import Synchronization
import Testing
import WebSocketTransport
@testable import SpeakerSyncServer

/// The route table on its own: what is declared, how paths match, and that no two routes answer the
/// same request. `RouteMiddlewareTests` runs requests through it.
@Suite struct RouteTableTests {
    static let table = RouteTable.api(services: RouteMiddlewareTests.services(), gate: AccessGate(config: AccessConfig(mode: .off), book: CredentialBook()),
                                      metrics: ServerMetrics(), logger: EndToEndTests.logger)

    /// Every route with its metrics name (the `route` label dashboards and alerts select on) and who
    /// may call it. A route added, renamed or opened shows up here.
    @Test func everyRouteIsDeclaredWithItsNameAndAccess() {
        let declared = Self.table.routes.map { "\($0.method.rawValue) \($0.pattern) \($0.name) \(Self.describe($0.access))" }
        #expect(declared.count == Set(declared).count)
        #expect(Set(declared) == [
            "GET / console open",
            "GET /console/{file} console open",
            "GET /openapi.json openapi open",
            "GET /asyncapi.json asyncapi open",
            "GET /livez live open",
            "GET /readyz ready open",
            "GET /healthz health open",
            "GET /metrics metrics admin",
            "GET /v1/providers providers credential",
            "GET /v1/whoami whoami credential",
            "GET /v1/conversations list_conversations credential",
            "GET /v1/conversations/{id} conversation conversation(id)",
            "DELETE /v1/conversations/{id} delete_conversation conversation(id)",
            "GET /v1/conversations/{id}/transcript transcript credential",
            "GET /v1/conversations/{id}/labellings labellings conversation(id)",
            "GET /v1/conversations/{id}/compare compare conversation(id)",
            "PUT /v1/conversations/{id}/references/{name} put_reference conversation(id)",
            "GET /v1/conversations/{id}/audio audio conversation(id)",
            "POST /v1/conversations/{id}/diarize start_diarization conversation(id)",
            "GET /v1/diarization-jobs list_diarization_jobs credential",
            "GET /v1/diarization-jobs/{id} diarization_job credential",
            "POST /v1/people enrol_person credential",
            "GET /v1/people list_people credential",
            "DELETE /v1/people/{id} delete_person credential",
            "POST /v1/conversations/{id}/speakers/{label}/person save_speaker_as_person conversation(id)",
            "POST /v1/devices/{device_id}/tokens create_device_token admin",
            "GET /v1/devices/{device_id}/tokens list_device_tokens admin",
            "DELETE /v1/devices/{device_id}/tokens/{token_id} revoke_device_token admin",
            "GET /v1/tokens list_tokens admin",
            "POST /v1/admin/key rotate_admin_key admin",
            "GET /v1/devices list_devices admin",
            "GET /v1/devices/{device_id}/settings device_settings device(device_id)",
            "PUT /v1/devices/{device_id}/settings device_settings device(device_id)",
            "POST /v1/conversations/{id}/speakers/{label} change_speaker conversation(id)",
            "GET /v1/sessions live_sessions credential",
            "GET /v1/sessions/{conversation_id} live_session credential",
            "POST /v1/test-recordings start_test_recording credential",
            "GET /v1/test-recordings list_test_recordings credential",
            "GET /v1/test-recordings/{id} test_recording credential",
        ])
    }

    /// Complete and unambiguous: each route answers a path made from its own pattern, with the
    /// parameters taken back out by name; no two routes could answer the same method and path; a
    /// metrics name stands for one path pattern (the console's for its page and its files) and one access.
    @Test func theTableIsCompleteAndUnambiguous() throws {
        let routes = Self.table.routes
        for route in routes {
            var values: [PathParameter: String] = [:]
            let path = "/" + route.pattern.segments.map { segment -> String in
                switch segment {
                case .literal(let text): return text
                case .parameter(let name):
                    values[name] = "\(name.rawValue)-value"
                    return "\(name.rawValue)-value"
                }
            }.joined(separator: "/")
            let matched = try Self.table.match(method: route.method.rawValue, path: path).get()
            #expect(matched.route.name == route.name && matched.route.pattern == route.pattern && matched.route.method == route.method, "\(path)")
            #expect(matched.parameters == PathParameters(values), "\(path)")
        }
        for (index, route) in routes.enumerated() {
            for other in routes[(index + 1)...] where route.method == other.method {
                #expect(!route.pattern.overlaps(other.pattern), "\(route.method) \(route.pattern) and \(other.pattern) could answer the same path")
            }
            for other in routes where other.name == route.name {
                #expect(other.access == route.access, "\(route.name) names routes with different access")
            }
        }
        // Only the console's page and its files share a name across patterns.
        let patternsByName = Dictionary(grouping: routes, by: \.name).mapValues { Set($0.map(\.pattern.text)) }
        #expect(patternsByName.filter { $0.value.count > 1 } == ["console": ["/", "/console/{file}"]])
    }

    @Test(arguments: [
        ("GET", "/healthz", "health", [:]),
        ("GET", "/livez", "live", [:]),
        ("GET", "/readyz", "ready", [:]),
        ("GET", "/metrics", "metrics", [:]),
        ("GET", "/v1/providers", "providers", [:]),
        ("GET", "/v1/conversations", "list_conversations", [:]),
        ("GET", "//v1///conversations/", "list_conversations", [:]),
        ("GET", "/v1/conversations/abc-1", "conversation", [.id: "abc-1"]),
        ("HEAD", "/v1/conversations/abc-1", "conversation", [.id: "abc-1"]),
        ("DELETE", "/v1/conversations/abc-1", "delete_conversation", [.id: "abc-1"]),
        ("GET", "/v1/conversations/abc-1/transcript", "transcript", [.id: "abc-1"]),
        ("GET", "/v1/conversations/abc-1/labellings", "labellings", [.id: "abc-1"]),
        ("GET", "/v1/conversations/abc-1/compare", "compare", [.id: "abc-1"]),
        ("GET", "/v1/conversations/abc-1/audio", "audio", [.id: "abc-1"]),
        ("POST", "/v1/conversations/abc-1/diarize", "start_diarization", [.id: "abc-1"]),
        ("PUT", "/v1/conversations/abc-1/references/truth", "put_reference", [.id: "abc-1", .name: "truth"]),
        // Paths come decoded once, by the transport: the table decodes nothing again.
        ("POST", "/v1/conversations/abc-1/speakers/Speaker 1", "change_speaker", [.id: "abc-1", .label: "Speaker 1"]),
        ("POST", "/v1/conversations/abc-1/speakers/Speaker 1/person", "save_speaker_as_person", [.id: "abc-1", .label: "Speaker 1"]),
        ("GET", "/v1/conversations/a%41", "conversation", [.id: "a%41"]),
        ("GET", "/v1/conversations/a%2F,b", "conversation", [.id: "a%2F,b"]),
        ("GET", "/v1/diarization-jobs", "list_diarization_jobs", [:]),
        ("GET", "/v1/diarization-jobs/j1", "diarization_job", [.id: "j1"]),
        ("POST", "/v1/people", "enrol_person", [:]),
        ("GET", "/v1/people", "list_people", [:]),
        ("HEAD", "/v1/people", "list_people", [:]),
        ("DELETE", "/v1/people/p1", "delete_person", [.id: "p1"]),
        ("POST", "/v1/devices/phone-1/tokens", "create_device_token", [.deviceID: "phone-1"]),
        ("GET", "/v1/devices/phone-1/tokens", "list_device_tokens", [.deviceID: "phone-1"]),
        ("DELETE", "/v1/devices/phone-1/tokens/t1", "revoke_device_token", [.deviceID: "phone-1", .tokenID: "t1"]),
        ("GET", "/v1/tokens", "list_tokens", [:]),
        ("POST", "/v1/admin/key", "rotate_admin_key", [:]),
        ("GET", "/v1/devices", "list_devices", [:]),
        ("GET", "/v1/devices/phone-1/settings", "device_settings", [.deviceID: "phone-1"]),
        ("PUT", "/v1/devices/phone-1/settings", "device_settings", [.deviceID: "phone-1"]),
        ("GET", "/", "console", [:]),
        ("GET", "/console/live-tab.js", "console", [.file: "live-tab.js"]),
        ("GET", "/v1/whoami", "whoami", [:]),
        ("GET", "/v1/sessions", "live_sessions", [:]),
        ("GET", "/v1/sessions/abc-1", "live_session", [.conversationID: "abc-1"]),
        ("POST", "/v1/test-recordings", "start_test_recording", [:]),
        ("GET", "/v1/test-recordings", "list_test_recordings", [:]),
        ("GET", "/v1/test-recordings/t1", "test_recording", [.id: "t1"]),
    ] as [(String, String, String, [PathParameter: String])])
    func knownRoutesMatch(method: String, path: String, name: String, parameters: [PathParameter: String]) throws {
        let matched = try Self.table.match(method: method, path: path).get()
        #expect(matched.route.name == name)
        #expect(matched.parameters == PathParameters(parameters))
    }

    /// Unknown paths are 404, a known path with another method 405 naming the methods it takes
    /// (HEAD is not named: GET routes answer it), and a path holding NUL 400.
    @Test(arguments: [
        ("GET", "/v2/nothing", 404, "not_found", "no route for /v2/nothing"),
        ("GET", "/console/a/b", 404, "not_found", "no route for /console/a/b"),
        ("GET", "/v1/conversations/x/nothing", 404, "not_found", "no route for /v1/conversations/x/nothing"),
        ("POST", "/v1/conversations/x", 405, "method_not_allowed", "POST is not allowed on /v1/conversations/x; use GET or DELETE"),
        ("PUT", "/v1/people", 405, "method_not_allowed", "PUT is not allowed on /v1/people; use GET or POST"),
        ("DELETE", "/v1/devices/d/settings", 405, "method_not_allowed", "DELETE is not allowed on /v1/devices/d/settings; use GET or PUT"),
        ("PUT", "/v1/devices/d/tokens", 405, "method_not_allowed", "PUT is not allowed on /v1/devices/d/tokens; use GET or POST"),
        ("DELETE", "/v1/test-recordings", 405, "method_not_allowed", "DELETE is not allowed on /v1/test-recordings; use GET or POST"),
        ("HEAD", "/v1/admin/key", 405, "method_not_allowed", "HEAD is not allowed on /v1/admin/key; use POST"),
        ("OPTIONS", "/", 405, "method_not_allowed", "OPTIONS is not allowed on /; use GET"),
        ("GET", "/v1/conversations/x/diarize", 405, "method_not_allowed", "GET is not allowed on /v1/conversations/x/diarize; use POST"),
        ("GET", "/v1/conversations/a\u{0}b", 400, "invalid_text",
         "the path is not UTF-8 text without NUL characters; text that PostgreSQL cannot store is refused"),
    ])
    func unknownPathsAndMethodsAreRefused(method: String, path: String, status: Int, code: String, message: String) {
        guard case .failure(let error) = Self.table.match(method: method, path: path) else {
            Issue.record("\(method) \(path) matched")
            return
        }
        #expect(APIError(status: error.status, code: error.code, message: error.message) == APIError(status: status, code: code, message: message))
        // A 405 names what the path takes in `Allow` (RFC 9110): the methods of its message, HEAD with GET.
        if status == 405 {
            let named = message.components(separatedBy: "; use ").last!.components(separatedBy: " or ")
            #expect(error.allowedMethods == (named.contains("GET") ? named + ["HEAD"] : named))
        } else {
            #expect(error.allowedMethods.isEmpty)
        }
    }

    /// The gate reads no body without a credential except on open routes: the probes, the API's
    /// descriptions and the console by the path as sent (anything under /console/, to its 404), nothing else.
    @Test func openPathsAreTheProbesTheDescriptionsAndTheConsole() {
        for path in ["/healthz", "/livez", "/readyz", "/openapi.json", "/asyncapi.json", "/", "/console/index.html", "/console/nothing", "/console/a/b", "/console/"] {
            #expect(Self.table.isOpen(path: path), "\(path)")
        }
        for path in ["/v1/conversations", "/metrics", "/v1/whoami", "//healthz", "/healthz/", "/console", "/consoles/x", "/v2/nothing", ""] {
            #expect(!Self.table.isOpen(path: path), "\(path)")
        }
    }

    static func describe(_ access: RouteAccess) -> String {
        switch access {
        case .open: "open"
        case .credential: "credential"
        case .admin: "admin"
        case .device(let parameter): "device(\(parameter.rawValue))"
        case .conversation(let parameter): "conversation(\(parameter.rawValue))"
        }
    }
}

/// Requests through `APIHandler`'s middleware, on a server without PostgreSQL: one stored conversation
/// of device phone-1, a device token each for phone-1 and phone-2, and the admin key.
@Suite struct RouteMiddlewareTests {
    static let adminKey = String(repeating: "a", count: CredentialBook.minimumEnvironmentKeyLength)

    struct OneConversation: ConversationReader {
        static let summary = ConversationSummary(id: "c1", deviceID: "phone-1", provider: "device", sampleRate: 16000, status: "ended",
                                                 statusReason: nil, audioSeconds: 1, startedAt: nil, endedAt: nil, wordCount: 0,
                                                 unlabelledWordCount: 0, speakers: [])
        func listConversations(deviceID: String?, limit: Int, cursor: String?) throws -> ConversationPage {
            ConversationPage(conversations: deviceID == nil || deviceID == "phone-1" ? [Self.summary] : [], nextCursor: nil)
        }
        func conversation(id: String) throws -> ConversationSummary? { id == "c1" ? Self.summary : nil }
        func transcript(id: String) throws -> TranscriptDocument? { nil }
        func checkHealth() throws {}
        func labellings(conversationID: String) throws -> [LabellingSummary] { [] }
        func transcript(id: String, labelling: String) throws -> TranscriptDocument? { nil }
    }

    static func services() -> APIServices {
        APIServices(reader: OneConversation(), providers: PluginRegistry(libraryPaths: [], logger: EndToEndTests.logger))
    }

    let metrics = ServerMetrics()
    let handler: APIHandler
    let phone1: String
    let phone2: String

    init() throws {
        let book = CredentialBook(environmentAdminKey: Self.adminKey)
        var tokens: [String] = []
        for device in ["phone-1", "phone-2"] {
            let token = try Credential.generate(.deviceToken)
            book.add(.init(id: token.id, kind: .deviceToken, deviceID: device, digest: token.digest))
            tokens.append(token.text)
        }
        (phone1, phone2) = (tokens[0], tokens[1])
        var config = AccessConfig(environmentAdminKey: Self.adminKey)
        config.requestsPerSecond = 0
        handler = APIHandler(services: Self.services(), gate: AccessGate(config: config, book: book, clock: { 0 }), metrics: metrics,
                             logger: EndToEndTests.logger)
    }

    /// What a client gets: the admission's refusal, or the handled response.
    func send(_ method: String, _ path: String, token: String? = nil, query: [String: String] = [:],
              invalidText: [String] = []) -> (status: Int, code: String?, message: String?, response: HTTPResponse, beforeBody: Bool) {
        let request = HTTPRequest(method: method, path: path, query: query, headers: token.map { ["authorization": "Bearer \($0)"] } ?? [:],
                                  invalidTextParameters: invalidText)
        let response: HTTPResponse
        let refusal = handler.admit(request)
        if let refusal {
            response = refusal
        } else {
            let answered = Mutex<HTTPResponse?>(nil)
            let done = DispatchSemaphore(value: 0)
            handler.handle(request) { response in
                answered.withLock { $0 = response }
                done.signal()
            }
            done.wait()
            response = answered.withLock { $0! }
        }
        let error = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])?["error"] as? [String: Any]
        return (response.status, error?["code"] as? String, error?["message"] as? String, response, refusal != nil)
    }

    func count(_ route: String, _ status: Int) throws -> Double? {
        try PrometheusText(metrics.render()).value(#"speakersync_http_requests_total{route="\#(route)",status="\#(status)"}"#)
    }

    @Test func openRoutesNeedNoCredentialAndTheRestAreRefusedBeforeTheBody() throws {
        #expect(send("GET", "/livez").status == 200)
        #expect(send("GET", "/healthz").status == 200)
        #expect(send("GET", "/").response.contentType.hasPrefix("text/html"))
        let missingFile = send("GET", "/console/secrets.js")
        #expect(missingFile.status == 404 && missingFile.code == "not_found")
        // Under /console/ but no route: let through to its 404, as before the table.
        let unrouted = send("GET", "/console/a/b")
        #expect(unrouted.code == "not_found" && !unrouted.beforeBody)
        for path in ["/v1/whoami", "/metrics", "/v2/nothing", "//healthz"] {
            let refused = send("GET", path)
            #expect(refused.status == 401 && refused.code == "unauthorized", "\(path)")
            #expect(refused.response.headers.contains { $0.0 == "www-authenticate" })
            #expect(refused.beforeBody, "\(path) is refused before its body")
        }
        #expect(send("GET", "/v1/whoami", token: "sst_nope").status == 401)
        #expect(try count("whoami", 401) == 2)
        #expect(try count("unmatched", 401) == 1)
        #expect(try count("health", 401) == 1)
        #expect(try count("live", 200) == 1)
        #expect(try count("console", 404) == 1)
    }

    @Test func adminRoutesRefuseDeviceTokensWithTheirOwnMessage() throws {
        for (path, message) in [("/metrics", "/metrics is for the admin key; device tokens cannot read server-wide figures"),
                                ("/v1/tokens", "only the admin key manages credentials"),
                                ("/v1/devices", "only the admin key lists every device")] {
            let refused = send("GET", path, token: phone1)
            #expect(refused.status == 403 && refused.code == "admin_required" && refused.message == message, "\(path)")
        }
        #expect(send("GET", "/metrics", token: Self.adminKey).status == 200)
        // The admin passes; this server keeps no credentials, which its routes say.
        let tokens = send("GET", "/v1/tokens", token: Self.adminKey)
        #expect(tokens.status == 404 && tokens.message == "this server keeps no credentials")
        #expect(try count("metrics", 403) == 1)
        #expect(try count("list_tokens", 404) == 1)
    }

    @Test func aDeviceTokenReachesOnlyItsOwnDeviceAndConversations() throws {
        let mismatch = send("GET", "/v1/devices/phone-2/settings", token: phone1)
        #expect(mismatch.status == 403 && mismatch.code == "device_mismatch")
        // Its own device passes the scope (this server keeps no device settings: 404 saying so).
        #expect(send("PUT", "/v1/devices/phone-1/settings", token: phone1).message == "this server keeps no device settings")

        let own = send("GET", "/v1/conversations/c1", token: phone1)
        #expect(own.status == 200)
        #expect((try JSONSerialization.jsonObject(with: Data(own.response.body)) as? [String: Any])?["device_id"] as? String == "phone-1")
        #expect(send("GET", "/v1/conversations/c1/labellings", token: phone1).status == 200)
        #expect(send("GET", "/v1/conversations/c1", token: Self.adminKey).status == 200)
        for path in ["/v1/conversations/c1", "/v1/conversations/c1/labellings", "/v1/conversations/c1/audio", "/v1/conversations/c1/transcript"] {
            let hidden = send("GET", path, token: phone2)
            #expect(hidden.status == 404 && hidden.code == "conversation_not_found" && hidden.message == "no conversation with id 'c1'", "\(path)")
        }
        let missing = send("DELETE", "/v1/conversations/c9", token: Self.adminKey)
        #expect(missing.status == 404 && missing.code == "conversation_not_found")
        // A bad format is refused before the conversation is looked at, whoever owns it.
        let format = send("GET", "/v1/conversations/c1/transcript", token: phone2, query: ["format": "doc"])
        #expect(format.status == 400 && format.code == "invalid_parameter")
        #expect(try count("conversation", 404) == 1)
        #expect(try count("device_settings", 403) == 1)
    }

    @Test func textIsCheckedBeforeTheRouteAndEveryAnswerCarriesItsRequestID() throws {
        let invalid = send("GET", "/v2/nothing", token: Self.adminKey, invalidText: ["q"])
        #expect(invalid.status == 400 && invalid.code == "invalid_text")
        let wrongMethod = send("POST", "/v1/conversations/c1", token: Self.adminKey)
        #expect(wrongMethod.status == 405 && wrongMethod.message == "POST is not allowed on /v1/conversations/c1; use GET or DELETE")
        let requestID = wrongMethod.response.headers.first { $0.0 == "x-request-id" }?.1
        let body = try JSONSerialization.jsonObject(with: Data(wrongMethod.response.body)) as? [String: Any]
        #expect(requestID != nil && (body?["error"] as? [String: Any])?["request_id"] as? String == requestID)
        #expect(send("GET", "/readyz").response.headers.contains { $0.0 == "x-request-id" })
        #expect(try count("unmatched", 400) == 1)
        #expect(try count("unmatched", 405) == 1)
    }

    /// Routes answered from a callback (a running session's) pass the same middleware: scoped,
    /// counted and their errors written with the request id when the reply comes.
    @Test func routesAnsweredLaterPassTheSameMiddleware() throws {
        let listed = send("GET", "/v1/sessions", token: phone1)
        #expect(listed.status == 200 && String(decoding: listed.response.body, as: UTF8.self) == #"{"sessions":[]}"#)
        let missing = send("GET", "/v1/sessions/c1", token: phone1)
        #expect(missing.status == 404 && missing.code == "session_not_found")
        #expect(missing.response.headers.contains { $0.0 == "x-request-id" })
        #expect(send("GET", "/v1/sessions").status == 401)
        let hidden = send("POST", "/v1/conversations/c1/speakers/S1", token: phone2)
        #expect(hidden.status == 404 && hidden.code == "conversation_not_found")
        let unparsable = send("POST", "/v1/conversations/c1/speakers/S1", token: phone1)
        #expect(unparsable.status == 400 && unparsable.code == "invalid_parameter")
        #expect(try count("live_sessions", 200) == 1)
        #expect(try count("live_session", 404) == 1)
        #expect(try count("live_sessions", 401) == 1)
        #expect(try count("change_speaker", 404) == 1)
        #expect(try count("change_speaker", 400) == 1)
    }

    @Test func overTheRateARequestIsRefusedBeforeItsBody() throws {
        var config = AccessConfig(environmentAdminKey: Self.adminKey)
        config.requestsPerSecond = 1
        config.requestBurst = 1
        let handler = APIHandler(services: Self.services(), gate: AccessGate(config: config, book: CredentialBook(environmentAdminKey: Self.adminKey), clock: { 0 }),
                                 metrics: metrics, logger: EndToEndTests.logger)
        let request = HTTPRequest(method: "GET", path: "/v1/whoami", headers: ["authorization": "Bearer \(Self.adminKey)"])
        #expect(handler.admit(request) == nil)
        #expect(handler.admit(request)?.status == 429)
        // The probes are not held to it.
        #expect(handler.admit(HTTPRequest(method: "GET", path: "/healthz")) == nil)
        #expect(try count("whoami", 429) == 1)
    }
}
