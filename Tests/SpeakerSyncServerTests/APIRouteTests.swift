import Testing
@testable import SpeakerSyncServer

@Suite struct APIRouteTests {
    @Test(arguments: [
        ("/healthz", APIRoute.health),
        ("/v1/providers", .providers),
        ("/v1/conversations", .listConversations),
        ("/v1/conversations/abc-1", .conversation(id: "abc-1")),
        ("/v1/conversations/abc-1/transcript", .transcript(id: "abc-1")),
        ("/v1/conversations/abc-1/labellings", .labellings(id: "abc-1")),
        ("/v1/conversations/abc-1/compare", .compare(id: "abc-1")),
        ("/v1/conversations/abc-1/audio", .audio(id: "abc-1")),
        ("/v1/diarization-jobs", .listDiarizationJobs),
        ("/v1/diarization-jobs/j1", .diarizationJob(id: "j1")),
        ("/", .console(file: "index.html")),
        ("/console/live-tab.js", .console(file: "live-tab.js")),
        ("/v1/whoami", .whoami),
        ("/v1/sessions", .liveSessions),
        ("/v1/sessions/abc-1", .liveSession(conversationID: "abc-1")),
        ("/v1/test-recordings", .listTestRecordings),
        ("/v1/test-recordings/t1", .testRecording(id: "t1")),
    ])
    func knownRoutesMatch(path: String, route: APIRoute) {
        let matched = try? APIRoute.match(method: "GET", path: path).get()
        #expect(matched == route)
    }

    @Test func unknownPathIs404AndWrongMethodIs405() {
        guard case .failure(let missing) = APIRoute.match(method: "GET", path: "/v2/nothing") else {
            Issue.record("expected a failure")
            return
        }
        #expect(missing.status == 404 && missing.code == "not_found")
        #expect((try? APIRoute.match(method: "DELETE", path: "/v1/conversations/x").get()) == .deleteConversation(id: "x"))
        guard case .failure(let method) = APIRoute.match(method: "POST", path: "/v1/conversations/x") else {
            Issue.record("expected a failure")
            return
        }
        #expect(method.status == 405 && method.code == "method_not_allowed")
    }
}
