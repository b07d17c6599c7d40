import Foundation
import SpeakerSyncClient
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// The console's provider toggle stored per device, and speaker corrections over HTTP, against a real
/// server and PostgreSQL.
@Suite(.serialized) struct DeviceRoutesTests {
    typealias TestServer = EndToEndTests.TestServer
    typealias Security = SecurityEndToEndTests

    /// Opens a session with `start` and returns its `session` message.
    static func session(_ server: TestServer, token: String, start: String) async throws -> [String: Any] {
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let (connection, events) = try Security.open(client, server.ws, headers: [("authorization", "Bearer \(token)")], start: start)
        defer { connection.close() }
        while let message = await events.nextJSON() {
            if message["type"] as? String == "session" || message["type"] as? String == "error" { return message }
        }
        return [:]
    }

    static func start(provider: String?) -> String {
        provider.map { #"{"type":"start","provider":"\#($0)","sample_rate":16000,"encoding":"pcm_s16le"}"# }
            ?? #"{"type":"start","sample_rate":16000,"encoding":"pcm_s16le"}"#
    }

    @Test func aStartWithoutAProviderUsesTheDevicesChoiceThenTheServerDefault() async throws {
        let server = try TestServer()
        let token = try Security.token(server, device: "phone-s")
        let other = try Security.token(server, device: "phone-t")

        let fresh = try server.json("/v1/devices/phone-s/settings", token: token)
        #expect(fresh.status == 200 && fresh.body["provider"] is NSNull)
        let defaultProvider = try #require(fresh.body["effective_provider"] as? String)
        var session = try await Self.session(server, token: token, start: Self.start(provider: nil))
        #expect(session["provider"] as? String == defaultProvider && session["provider_source"] as? String == "server")

        let put = try server.request("PUT", "/v1/devices/phone-s/settings", body: Array(#"{"provider":"energy"}"#.utf8), token: token)
        #expect(put.status == 200)
        #expect((put.json() as? [String: Any])?["provider"] as? String == "energy")
        session = try await Self.session(server, token: token, start: Self.start(provider: nil))
        #expect(session["provider"] as? String == "energy" && session["provider_source"] as? String == "device")
        // A start that names its provider keeps it.
        session = try await Self.session(server, token: token, start: Self.start(provider: "device"))
        #expect(session["provider"] as? String == "device" && session["provider_source"] as? String == "request")
        // Another device is not changed, and may not change this one.
        session = try await Self.session(server, token: other, start: Self.start(provider: nil))
        #expect(session["provider_source"] as? String == "server")
        let refused = try server.request("PUT", "/v1/devices/phone-s/settings", body: Array(#"{"provider":"device"}"#.utf8), token: other)
        #expect(refused.status == 403 && Security.code(refused) == "device_mismatch")

        // Clearing goes back to the server default; bad bodies say what is wrong.
        #expect(try server.request("PUT", "/v1/devices/phone-s/settings", body: Array(#"{"provider":null}"#.utf8), token: token).status == 200)
        session = try await Self.session(server, token: token, start: Self.start(provider: nil))
        #expect(session["provider_source"] as? String == "server")
        let unknown = try server.request("PUT", "/v1/devices/phone-s/settings", body: Array(#"{"provider":"nope"}"#.utf8), token: token)
        #expect(unknown.status == 400 && Security.code(unknown) == "unknown_provider")
        let malformed = try server.request("PUT", "/v1/devices/phone-s/settings", body: Array(#"{"provider":3}"#.utf8), token: token)
        #expect(malformed.status == 400 && Security.code(malformed) == "invalid_parameter")

        // The admin lists every device; a device token may not.
        let devices = try server.json("/v1/devices").body["devices"] as? [[String: Any]] ?? []
        #expect(devices.contains { $0["device_id"] as? String == "phone-s" })
        #expect(try server.request("GET", "/v1/devices", token: token).status == 403)
    }

    @Test func aSpeakerIsRenamedAndMergedOverHTTPLiveAndStored() async throws {
        let server = try TestServer()
        let token = try Security.token(server, device: "phone-r")
        let other = try Security.token(server, device: "phone-u")
        let client = try WebSocketClient(logger: EndToEndTests.logger)
        defer { client.shutdown() }
        let (connection, events) = try Security.open(client, server.ws, headers: [("authorization", "Bearer \(token)")],
                                                     start: Security.start(device: nil, conversation: "relabel"))
        #expect(await Security.sendWord(connection, events, text: "hello", at: 0.5))
        connection.send(.text(#"{"type":"segments","segments":[{"speaker":"B","start":3,"end":4}]}"#))
        connection.send(.text(#"{"type":"words","result_id":"b","final":true,"words":[{"text":"there","start":3.1,"end":3.4}]}"#))

        // Live: applied by the session, and the device is told.
        let renamed = try server.request("POST", "/v1/conversations/relabel/speakers/Speaker%201", body: Array(#"{"name":"Alice"}"#.utf8), token: token)
        #expect(renamed.status == 200)
        #expect((renamed.json() as? [String: Any])?["live"] as? Bool == true)
        var told = false
        while !told, let message = await events.nextJSON() {
            told = message["type"] as? String == "speakers"
                && (message["speakers"] as? [[String: Any]])?.contains { $0["name"] as? String == "Alice" } == true
        }
        #expect(told)
        // Refused changes are HTTP errors and leave the device's session running.
        let unknown = try server.request("POST", "/v1/conversations/relabel/speakers/Speaker%209", body: Array(#"{"name":"X"}"#.utf8), token: token)
        #expect(unknown.status == 404 && Security.code(unknown) == "speaker_not_found")
        let both = try server.request("POST", "/v1/conversations/relabel/speakers/Speaker%201", body: Array(#"{"name":"X","merge_into":"Speaker 2"}"#.utf8), token: token)
        #expect(both.status == 400 && Security.code(both) == "invalid_parameter")
        // Another device's conversation answers like a missing one.
        let foreign = try server.request("POST", "/v1/conversations/relabel/speakers/Speaker%201", body: Array(#"{"name":"Eve"}"#.utf8), token: other)
        #expect(foreign.status == 404 && Security.code(foreign) == "conversation_not_found")

        connection.send(.text(#"{"type":"finalize"}"#))
        _ = await events.closeCode()

        // Stored: a merge rewrites the words' speaker in PostgreSQL.
        let merged = try server.request("POST", "/v1/conversations/relabel/speakers/Speaker%202", body: Array(#"{"merge_into":"Speaker 1"}"#.utf8), token: token)
        #expect(merged.status == 200)
        #expect((merged.json() as? [String: Any])?["live"] as? Bool == false)
        let words = try server.storedWords("relabel")
        #expect(words.count == 2 && words.allSatisfy { $0.speaker == "Speaker 1" })
        let text = try server.request("GET", "/v1/conversations/relabel/transcript?format=text", token: token).text
        #expect(text.contains("Alice: hello") && text.contains("Alice: there"))
        let again = try server.request("POST", "/v1/conversations/relabel/speakers/Speaker%202", body: Array(#"{"merge_into":"Speaker 1"}"#.utf8), token: token)
        #expect(again.status == 400 && Security.code(again) == "invalid_merge")
    }
}
