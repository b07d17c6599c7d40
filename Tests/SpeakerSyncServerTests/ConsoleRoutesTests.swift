import Foundation
import SpeakerSyncClient
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// The routes the console calls, against a real server: the page is served without a credential and
/// holds no data; live sessions and test recordings are scoped to the token's device like every route.
@Suite(.serialized) struct ConsoleRoutesTests {
    typealias TestServer = EndToEndTests.TestServer
    typealias Security = SecurityEndToEndTests

    @Test func theConsoleIsServedWithoutACredentialWithEveryFileItLoads() throws {
        let server = try TestServer()
        let page = try SimpleHTTPClient.get(server.http + "/")
        #expect(page.status == 200)
        #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(page.headers["content-security-policy"]?.contains("default-src 'self'") == true)
        // Every file the page and its modules load is served (a missing one would break the page).
        var referenced: Set<String> = []
        let pattern = try NSRegularExpression(pattern: #"(?:from "\./|src="/console/|href="/console/|addModule\("/console/)([a-z\-]+\.(?:js|css))"#)
        for file in ConsoleAssets.files.keys {
            let text = try SimpleHTTPClient.get(server.http + "/console/\(file)").text
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                referenced.insert(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        #expect(referenced.count >= 8)
        for file in referenced {
            let response = try SimpleHTTPClient.get(server.http + "/console/\(file)")
            #expect(response.status == 200, "\(file) is referenced but not served")
            #expect(response.headers["content-type"]?.contains(file.hasSuffix(".css") ? "text/css" : "text/javascript") == true)
        }
        let missing = try SimpleHTTPClient.get(server.http + "/console/secrets.js")
        #expect(missing.status == 404 && Security.code(missing) == "not_found")
        // The page is static; the data behind it still needs a credential.
        #expect(try SimpleHTTPClient.get(server.http + "/v1/sessions").status == 401)
        #expect(try SimpleHTTPClient.get(server.http + "/v1/whoami").status == 401)
    }

    @Test func whoamiSaysWhatTheCredentialActsAs() throws {
        let server = try TestServer()
        let token = try Security.token(server, device: "phone-who")
        let admin = try server.json("/v1/whoami")
        #expect(admin.body["role"] as? String == "admin" && admin.body["device_id"] is NSNull)
        let device = try server.json("/v1/whoami", token: token)
        #expect(device.body["role"] as? String == "device" && device.body["device_id"] as? String == "phone-who")
    }

    @Test func liveSessionsAreListedOnlyToTheirDeviceAndTheAdmin() async throws {
        let server = try TestServer()
        let tokenA = try Security.token(server, device: "phone-a")
        let tokenB = try Security.token(server, device: "phone-b")
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let (connection, events) = try Security.open(client, server.ws, headers: [("authorization", "Bearer \(tokenA)")],
                                                     start: Security.start(device: nil, conversation: "live-a"))
        #expect(await Security.sendWord(connection, events, text: "hello", at: 0.5))

        let listed = try server.json("/v1/sessions").body["sessions"] as? [[String: Any]] ?? []
        let session = try #require(listed.first { $0["conversation_id"] as? String == "live-a" })
        #expect(session["device_id"] as? String == "phone-a" && session["provider"] as? String == "device")
        #expect(session["word_count"] as? Int == 1)
        #expect(try server.json("/v1/sessions", token: tokenA).body["sessions"].map { ($0 as? [Any])?.count } == 1)
        #expect(try server.json("/v1/sessions", token: tokenB).body["sessions"].map { ($0 as? [Any])?.count } == 0)

        let detail = try server.json("/v1/sessions/live-a", token: tokenA)
        #expect(detail.status == 200)
        let utterances = (detail.body["transcript"] as? [String: Any])?["utterances"] as? [[String: Any]] ?? []
        #expect(utterances.first?["text"] as? String == "hello")
        #expect((utterances.first?["words"] as? [[String: Any]])?.first?["speaker_confidence"] is Double)
        // Another device's live session answers exactly like one that does not run.
        let other = try server.request("GET", "/v1/sessions/live-a", token: tokenB)
        let absent = try server.request("GET", "/v1/sessions/live-a", token: tokenB)
        #expect(other.status == 404 && Security.code(other) == "session_not_found")
        #expect(Security.errorWithoutRequestID(other) == Security.errorWithoutRequestID(absent))
        connection.close()
    }

    @Test(arguments: [
        (#"{"speakers": 9}"#, 400, "invalid_parameter"),
        (#"{"speakers": true}"#, 400, "invalid_parameter"),
        (#"{"turns": 2.5}"#, 400, "invalid_parameter"),
        (#"{"speed": 100}"#, 400, "invalid_parameter"),
        (#"{"seed": -1}"#, 400, "invalid_parameter"),
        (#"{"providers": []}"#, 400, "invalid_parameter"),
        (#"{"providers": ["nope"]}"#, 400, "unknown_provider"),
        (#"[1]"#, 400, "invalid_parameter"),
        (#"{"device_id": "phone-z"}"#, 403, "device_mismatch"),
    ])
    func badTestRecordingRequestsAreRefusedWithWhatIsWrong(body: String, status: Int, code: String) throws {
        let principal = Principal.device(deviceID: "phone-a", tokenID: "t")
        do {
            _ = try TestRecordingRequest.parse(Array(body.utf8), principal: principal, knownProviders: ["energy"],
                                               defaultProvider: "energy", randomSeed: { 1 })
            Issue.record("\(body) was accepted")
        } catch {
            #expect(error.status == status && error.code == code, "\(body): \(error)")
        }
    }

    @Test func aTestRecordingRequestHasDefaultsAndADeviceTokenRunsAsItsDevice() throws {
        let parsed = try TestRecordingRequest.parse([], principal: .device(deviceID: "phone-a", tokenID: "t"),
                                                    knownProviders: ["energy", "speakerkit"], defaultProvider: "speakerkit", randomSeed: { 77 })
        #expect(parsed == TestRecordingRequest(providers: ["speakerkit"], speakerCount: 2, turnCount: 10, seed: 77, speed: 1, deviceID: "phone-a"))
        let admin = try TestRecordingRequest.parse(Array(#"{"providers":["energy","energy","speakerkit"],"speakers":3,"seed":5,"device_id":"lab"}"#.utf8),
                                                   principal: .admin(keyID: "k"), knownProviders: ["energy", "speakerkit"],
                                                   defaultProvider: nil, randomSeed: { 0 })
        #expect(admin.providers == ["energy", "speakerkit"] && admin.speakerCount == 3 && admin.seed == 5 && admin.deviceID == "lab")
    }

    @Test func aTestRecordingStreamsAsTheCallersDeviceAndIsScoredAgainstTheTruth() async throws {
        let server = try TestServer()
        let tokenA = try Security.token(server, device: "phone-a")
        let tokenB = try Security.token(server, device: "phone-b")
        let started = try server.request("POST", "/v1/test-recordings", body: Array(#"{"provider":"energy","turns":3,"speed":8,"seed":21}"#.utf8), token: tokenA)
        #expect(started.status == 202)
        let report = try #require(started.json() as? [String: Any])
        let id = try #require(report["id"] as? String)
        #expect(started.headers["location"] == "/v1/test-recordings/\(id)")
        #expect((report["request"] as? [String: Any])?["device_id"] as? String == "phone-a")
        #expect(try server.request("GET", "/v1/test-recordings/\(id)", token: tokenB).status == 404)

        var finished: [String: Any] = [:]
        for _ in 0..<1200 {
            finished = try server.json("/v1/test-recordings/\(id)", token: tokenA).body
            if ["done", "failed"].contains(finished["status"] as? String) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(finished["status"] as? String == "done")
        let truth = try #require(finished["truth"] as? [String: Any])
        #expect(truth["speaker_count"] as? Int == 2 && (truth["turns"] as? [Any])?.count == 3)
        let result = try #require((finished["results"] as? [[String: Any]])?.first)
        #expect(result["status"] as? String == "done")
        #expect(result["speakers_reference"] as? Int == 2)
        for key in ["der", "der_collar", "wder", "jer"] {
            let value = try #require(result[key] as? Double, "\(key) missing")
            #expect((0...2).contains(value), "\(key) = \(value)")
        }
        #expect(result["word_count"] as? Int == truth["word_count"] as? Int)
        // Stored as the caller's device: its own conversation, invisible to another device.
        let conversation = try #require(result["conversation_id"] as? String)
        #expect(try server.json("/v1/conversations/\(conversation)", token: tokenA).body["device_id"] as? String == "phone-a")
        #expect(try server.request("GET", "/v1/conversations/\(conversation)", token: tokenB).status == 404)
        #expect(try server.json("/v1/test-recordings", token: tokenB).body["test_recordings"].map { ($0 as? [Any])?.count } == 0)
    }
}
