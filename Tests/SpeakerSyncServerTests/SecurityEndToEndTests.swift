import Foundation
import Logging
import PostgresClient
import SpeakerSyncClient
import Testing
import TestSupport
import WebSocketTransport
@testable import SpeakerSyncServer

/// Who may do what, against a real server: every route and the WebSocket without a credential, with
/// a wrong one, with another device's token, with a token revoked mid-session; the limits; the
/// generated admin key; secrets kept out of logs and storage.
@Suite(.serialized) struct SecurityEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    static let logger: Logger = EndToEndTests.logger

    /// Every route but /healthz and the console's static files, with a method it accepts.
    static let routes: [(String, String)] = [
        ("GET", "/v1/providers"), ("GET", "/v1/conversations"), ("GET", "/v1/conversations/c1"),
        ("GET", "/v1/conversations/c1/transcript"), ("GET", "/v1/conversations/c1/labellings"), ("DELETE", "/v1/conversations/c1"),
        ("GET", "/v1/conversations/c1/compare?providers=a,b"), ("GET", "/v1/conversations/c1/audio"), ("POST", "/v1/conversations/c1/diarize?provider=energy"),
        ("GET", "/v1/diarization-jobs"), ("GET", "/v1/diarization-jobs/j1"), ("PUT", "/v1/conversations/c1/references/r"), ("POST", "/v1/people?device_id=a&name=b"), ("GET", "/v1/people?device_id=a"),
        ("DELETE", "/v1/people/p1"), ("POST", "/v1/conversations/c1/speakers/Speaker%201/person"),
        ("POST", "/v1/devices/a/tokens"), ("GET", "/v1/devices/a/tokens"), ("DELETE", "/v1/devices/a/tokens/t1"),
        ("GET", "/v1/tokens"), ("POST", "/v1/admin/key"),
        ("GET", "/v1/whoami"), ("GET", "/v1/sessions"), ("GET", "/v1/sessions/c1"),
        ("POST", "/v1/test-recordings"), ("GET", "/v1/test-recordings"), ("GET", "/v1/test-recordings/t1"),
    ]

    static func code(_ response: SimpleHTTPResponse) -> String? {
        ((response.json() as? [String: Any])?["error"] as? [String: Any])?["code"] as? String
    }

    /// An error body without its request id (each request has its own): what two answers share
    /// when they tell the client the same thing.
    static func errorWithoutRequestID(_ response: SimpleHTTPResponse) -> [String: String] {
        var error = ((response.json() as? [String: Any])?["error"] as? [String: Any]) ?? [:]
        error["request_id"] = nil
        return error.compactMapValues { $0 as? String }
    }

    /// A token for `device`, created by the admin over HTTP.
    static func token(_ server: TestServer, device: String) throws -> String {
        let response = try server.request("POST", "/v1/devices/\(device)/tokens?label=test")
        #expect(response.status == 201)
        return try #require((response.json() as? [String: Any])?["token"] as? String)
    }

    /// Opens a WebSocket with `headers` and sends `start`; returns the connection and its events.
    static func open(_ client: WebSocketClient, _ url: String, headers: [(String, String)], start: String?) throws -> (WebSocketClientConnection, EventReader) {
        let connection = try client.connect(url: url, headers: headers)
        if let start { connection.send(.text(start)) }
        return (connection, EventReader(connection.events))
    }

    static func start(device: String?, conversation: String? = nil) -> String {
        var object: [String: Any] = ["type": "start", "provider": "device", "sample_rate": 16000, "encoding": "pcm_s16le"]
        if let device { object["device_id"] = device }
        if let conversation { object["conversation_id"] = conversation }
        return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// Waits for the upgrade's outcome: true when the connection was accepted.
    static func accepted(_ connection: WebSocketClientConnection) async -> (accepted: Bool, reason: String?) {
        for await event in connection.events {
            switch event {
            case .connected: return (true, nil)
            case .disconnected(_, let reason): return (false, reason)
            default: continue
            }
        }
        return (false, nil)
    }

    /// Sends a word with a device segment and waits until the transcript carries it (stored: the
    /// server sends transcript updates after the commit).
    static func sendWord(_ connection: WebSocketClientConnection, _ events: EventReader, text: String, at seconds: Double) async -> Bool {
        connection.send(.text(#"{"type":"segments","segments":[{"speaker":"A","start":\#(seconds),"end":\#(seconds + 1)}]}"#))
        connection.send(.text(#"{"type":"words","result_id":"r\#(Int(seconds * 10))","final":true,"words":[{"text":"\#(text)","start":\#(seconds + 0.1),"end":\#(seconds + 0.4)}]}"#))
        while let message = await events.nextJSON() {
            if message["type"] as? String == "transcript",
               (message["upserted"] as? [[String: Any]])?.contains(where: { $0["text"] as? String == text }) == true { return true }
        }
        return false
    }

    // MARK: Credentials required

    @Test func everyRouteAndTheWebSocketRefuseMissingAndWrongCredentials() async throws {
        let server = try TestServer()
        let forged = "sst_0123456789abcdef_" + String(repeating: "ab", count: 32)
        for (method, path) in Self.routes {
            for token in [nil, forged, "Basic-looking-garbage"] as [String?] {
                let response = try SimpleHTTPClient.request(method: method, url: server.http + path, body: method == "POST" ? [1, 2, 3] : [],
                                                            token: token)
                #expect(response.status == 401, "\(method) \(path) with \(token ?? "nothing")")
                #expect(Self.code(response) == "unauthorized", "\(method) \(path)")
                #expect(response.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            }
        }
        // /healthz stays open for probes, but says no more than "up" without a credential.
        let open = try SimpleHTTPClient.get(server.http + "/healthz")
        #expect(open.status == 200)
        #expect(Set((open.json() as? [String: Any])?.keys ?? [:].keys) == ["status", "database"])
        let detailed = try server.json("/healthz")
        #expect(detailed.body["provider_workers"] != nil)

        let client = try WebSocketClient(logger: Self.logger)
        defer { client.shutdown() }
        for headers in [[], [("authorization", "Bearer \(forged)")]] as [[(String, String)]] {
            let (connection, _) = try Self.open(client, server.ws, headers: headers, start: nil)
            let outcome = await Self.accepted(connection)
            #expect(!outcome.accepted)
            #expect(outcome.reason?.contains("unauthorized") == true, "\(outcome.reason ?? "")")
        }
        let (queryForged, _) = try Self.open(client, server.ws + "?token=\(forged)", headers: [], start: nil)
        #expect(await !Self.accepted(queryForged).accepted)
    }

    /// Issue 28: worker pids, plugin paths and server-wide figures are the operator's. A device token
    /// learns from /healthz only whether the server is up, and /metrics refuses it.
    @Test func aDeviceTokenSeesNoServerWideDetails() throws {
        let server = try TestServer()
        let token = try Self.token(server, device: "phone-a")
        let health = try SimpleHTTPClient.get(server.http + "/healthz", token: token)
        #expect(health.status == 200)
        #expect(Set((health.json() as? [String: Any])?.keys ?? [:].keys) == ["status", "database"])
        let metrics = try SimpleHTTPClient.get(server.http + "/metrics", token: token)
        #expect(metrics.status == 403)
        #expect(Self.code(metrics) == "admin_required")
        #expect(!String(decoding: metrics.body, as: UTF8.self).contains("speakersync_"))
        // The admin still gets both in full.
        #expect(try server.json("/healthz").body["provider_workers"] != nil)
        #expect(try server.request("GET", "/metrics").text.contains("speakersync_http_requests_total"))
    }

    @Test func anUnauthenticatedBodyIsRefusedBeforeItIsRead() throws {
        let server = try TestServer { $0.maxHTTPBodyBytes = 4096 }
        let big = [UInt8](repeating: 7, count: 64 * 1024)
        let anonymous = try SimpleHTTPClient.request(method: "POST", url: server.http + "/v1/people?device_id=a&name=b", body: big)
        #expect(anonymous.status == 401) // not 413: the body was never read
        let admin = try server.request("POST", "/v1/people?device_id=a&name=b", body: big, contentType: "audio/wav")
        #expect(admin.status == 413)
        #expect(Self.code(admin) == "body_too_large")
    }

    // MARK: Tokens and scope

    @Test func tokensAreShownOnceStoredAsDigestsAndManagedOnlyByTheAdmin() throws {
        let server = try TestServer()
        let created = try server.request("POST", "/v1/devices/phone-a/tokens?label=Ana%27s%20phone")
        #expect(created.status == 201)
        #expect(created.headers["cache-control"] == "no-store")
        let object = try #require(created.json() as? [String: Any])
        let token = try #require(object["token"] as? String)
        let tokenID = try #require(object["token_id"] as? String)
        #expect(token.hasPrefix("sst_\(tokenID)_") && token.count == 4 + 16 + 1 + 64)
        #expect(object["label"] as? String == "Ana's phone")

        // Lists never show the secret; PostgreSQL holds its SHA-256 only.
        let listed = try server.request("GET", "/v1/devices/phone-a/tokens")
        #expect(!listed.text.contains(token) && listed.text.contains(tokenID))
        let all = try server.json("/v1/tokens")
        #expect((all.body["tokens"] as? [[String: Any]])?.map { $0["token_id"] as? String } == [tokenID])
        let rows = try PGConnection(connectionString: server.connectionString).query("SELECT * FROM device_tokens", [])
        #expect(rows.rows.count == 1)
        #expect(try rows.rows[0].decode(String.self, column: "digest") == Credential.digest(of: token))
        let dump = try PGConnection(connectionString: server.connectionString).query("SELECT device_tokens::text AS row FROM device_tokens", [])
        #expect(try !dump.rows[0].decode(String.self, column: "row").contains(String(token.suffix(64))))

        // A device token manages no credentials.
        for (method, path) in [("POST", "/v1/devices/phone-a/tokens"), ("GET", "/v1/tokens"), ("DELETE", "/v1/devices/phone-a/tokens/\(tokenID)"),
                               ("POST", "/v1/admin/key")] {
            let response = try server.request(method, path, token: token)
            #expect(response.status == 403, "\(method) \(path)")
            #expect(Self.code(response) == "admin_required")
        }
        #expect(try server.request("POST", "/v1/devices/\(String(repeating: "d", count: 129))/tokens").status == 400)
        #expect(try server.request("DELETE", "/v1/devices/phone-b/tokens/\(tokenID)").status == 404) // wrong device
        #expect(try server.request("DELETE", "/v1/devices/phone-a/tokens/\(tokenID)").status == 200)
        #expect(try server.request("DELETE", "/v1/devices/phone-a/tokens/\(tokenID)").status == 404) // already revoked
        #expect(try server.request("GET", "/v1/conversations", token: token).status == 401)
        let revoked = try server.json("/v1/devices/phone-a/tokens")
        #expect((revoked.body["tokens"] as? [[String: Any]])?.first?["revoked_at"] is String)
    }

    @Test func aDeviceTokenReadsAndChangesOnlyItsOwnDevice() async throws {
        let server = try TestServer()
        let tokenA = try Self.token(server, device: "phone-a")
        let client = try WebSocketClient(logger: Self.logger)
        defer { client.shutdown() }

        // Device B's conversation, streamed by the admin; device A's, streamed with A's token and no device_id.
        let (b, bEvents) = try Self.open(client, server.ws, headers: server.authorization, start: Self.start(device: "phone-b"))
        let bSession = await bEvents.nextJSON()
        let conversationB = try #require(bSession?["conversation_id"] as? String)
        #expect(await Self.sendWord(b, bEvents, text: "bee", at: 0))
        b.send(.text(#"{"type":"finalize"}"#))
        #expect(await bEvents.closeCode() == 1000)

        let (a, aEvents) = try Self.open(client, server.ws, headers: [("authorization", "Bearer \(tokenA)")], start: Self.start(device: nil))
        let conversationA = try #require(await aEvents.nextJSON()?["conversation_id"] as? String)
        #expect(await Self.sendWord(a, aEvents, text: "ay", at: 0))
        a.send(.text(#"{"type":"finalize"}"#))
        #expect(await aEvents.closeCode() == 1000)

        // Reads: A's own only; B's conversation answers exactly like one that does not exist.
        let list = try server.json("/v1/conversations", token: tokenA)
        #expect((list.body["conversations"] as? [[String: Any]])?.map { $0["id"] as? String } == [conversationA])
        #expect((try server.json("/v1/conversations/\(conversationA)", token: tokenA)).body["device_id"] as? String == "phone-a")
        for path in ["/v1/conversations/\(conversationB)", "/v1/conversations/\(conversationB)/transcript",
                     "/v1/conversations/\(conversationB)/labellings", "/v1/conversations/\(conversationB)/transcript?provider=device"] {
            let response = try server.request("GET", path, token: tokenA)
            let missing = try server.request("GET", path.replacingOccurrences(of: conversationB, with: "no-such-id"), token: tokenA)
            #expect(response.status == 404 && Self.code(response) == "conversation_not_found")
            var expected = Self.errorWithoutRequestID(missing)
            expected["message"] = expected["message"]?.replacingOccurrences(of: "no-such-id", with: conversationB)
            #expect(Self.errorWithoutRequestID(response) == expected)
        }
        let saved = try server.request("POST", "/v1/conversations/\(conversationB)/speakers/Speaker%201/person", token: tokenA)
        #expect(saved.status == 404)
        #expect(try server.request("GET", "/v1/conversations?device_id=phone-b", token: tokenA).status == 403)
        #expect(try server.request("GET", "/v1/people?device_id=phone-b", token: tokenA).status == 403)
        #expect(try server.request("GET", "/v1/people", token: tokenA).status == 200) // device_id from the token
        // The admin sees both.
        #expect((try server.json("/v1/conversations").body["conversations"] as? [[String: Any]])?.count == 2)

        // People: B's person cannot be deleted with A's token, and still exists afterwards.
        let database = try PGConnection(connectionString: server.connectionString)
        try database.execute("INSERT INTO people (person_id, device_id, name, provider, embedding, speech_seconds, source) VALUES ('pb', 'phone-b', 'Bea', 'speakerkit', '{1,0}', 3, 'test')")
        #expect(try server.request("DELETE", "/v1/people/pb", token: tokenA).status == 404)
        #expect(try database.query("SELECT 1 FROM people WHERE person_id = 'pb'").rows.count == 1)
        #expect(try server.request("DELETE", "/v1/people/pb").status == 200)

        // Sessions: another device_id is refused; resuming B's conversation is refused without touching it.
        let (_, mismatch) = try Self.open(client, server.ws, headers: [("authorization", "Bearer \(tokenA)")], start: Self.start(device: "phone-b"))
        #expect(await mismatch.nextJSON()?["code"] as? String == "device_mismatch")
        #expect(await mismatch.closeCode() == 1008)
        let (_, resume) = try Self.open(client, server.ws, headers: [("authorization", "Bearer \(tokenA)")],
                                       start: Self.start(device: nil, conversation: conversationB))
        #expect(await resume.nextJSON()?["code"] as? String == "conversation_not_found")
        #expect(await resume.closeCode() == 1007)
        let stored = try database.query("SELECT device_id, status FROM conversations WHERE id = $1", [conversationB]).rows[0]
        #expect(try stored.decode(String.self, column: "device_id") == "phone-b")
        #expect(try stored.decode(String.self, column: "status") == "finalized")
        // Resuming its own conversation works.
        let (_, own) = try Self.open(client, server.ws, headers: [("authorization", "Bearer \(tokenA)")],
                                    start: Self.start(device: nil, conversation: conversationA))
        #expect(await own.nextJSON()?["resumed"] as? Bool == true)
    }

    @Test func revokingATokenClosesItsSessionAtOnceAndKeepsWhatWasAcknowledged() async throws {
        let server = try TestServer()
        let token = try Self.token(server, device: "phone-r")
        let tokenID = try #require(Credential.parse(token)?.id)
        let client = try WebSocketClient(logger: Self.logger)
        defer { client.shutdown() }
        let (connection, events) = try Self.open(client, server.ws, headers: [("authorization", "Bearer \(token)")], start: Self.start(device: "phone-r"))
        let conversation = try #require(await events.nextJSON()?["conversation_id"] as? String)
        #expect(await Self.sendWord(connection, events, text: "kept", at: 0))

        #expect(try server.request("DELETE", "/v1/devices/phone-r/tokens/\(tokenID)").status == 200)
        var sawRevoked = false
        while let message = await events.nextJSON() {
            if message["code"] as? String == "credential_revoked" { sawRevoked = message["fatal"] as? Bool == true; break }
        }
        #expect(sawRevoked)
        #expect(await events.closeCode() == 4003)
        // The acknowledged word is stored; the conversation is resumable (interrupted), not lost.
        let rows = try server.storedWords(conversation)
        #expect(rows.map(\.text) == ["kept"])
        // The teardown stores the final state on its own queue, just after the close.
        let database = try PGConnection(connectionString: server.connectionString)
        #expect(Polling.until(seconds: 30) {
            (try? database.query("SELECT status FROM conversations WHERE id = $1", [conversation]).rows.first?
                .decode(String.self, column: "status")) == "interrupted"
        })
        // The revoked token opens nothing any more; a new token resumes the conversation.
        let (again, _) = try Self.open(client, server.ws, headers: [("authorization", "Bearer \(token)")], start: nil)
        #expect(await !Self.accepted(again).accepted)
        let fresh = try Self.token(server, device: "phone-r")
        let (_, resumed) = try Self.open(client, server.ws, headers: [("authorization", "Bearer \(fresh)")],
                                        start: Self.start(device: nil, conversation: conversation))
        #expect(await resumed.nextJSON()?["resumed"] as? Bool == true)
    }

    @Test func browsersPresentTheTokenAsSubprotocolOrQueryAndNeitherIsLoggedOrStored() async throws {
        let log = CapturedLog()
        var config = ServerConfig.default
        config.port = 0
        config.session.idleIntervalSeconds = 600
        config.databaseURL = try TestCluster.freshDatabase()
        config.access.environmentAdminKey = TestServer.adminKey
        let app = SpeakerSyncApplication(config: config, logger: log.logger(level: .trace))
        let port = try app.start()
        defer { app.shutdown() }
        let token = try app.createDeviceToken(deviceID: "browser")

        // Sec-WebSocket-Protocol: token, <token> — the server must answer with the "token" subprotocol.
        let raw = try RawConnection(port: port)
        try raw.send("GET /v1/listen HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: token, \(token)\r\n\r\n")
        let head = try raw.readHead().lowercased()
        #expect(head.hasPrefix("http/1.1 101"), "\(head)")
        #expect(head.contains("sec-websocket-protocol: token\r\n"), "\(head)")
        let rawRefused = try RawConnection(port: port)
        try rawRefused.send("GET /v1/listen HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: token, sst_nope\r\n\r\n")
        let refusedHead = try rawRefused.readHead()
        #expect(refusedHead.hasPrefix("HTTP/1.") && refusedHead.contains(" 401 "), "\(refusedHead)")

        // ?token= works too (the documented last resort), and the session is bound to the device.
        let client = try WebSocketClient(logger: Self.logger)
        defer { client.shutdown() }
        let (connection, events) = try Self.open(client, "ws://127.0.0.1:\(port)/v1/listen?token=\(token)&provider=device&sample_rate=16000&encoding=pcm_s16le",
                                                 headers: [], start: nil)
        let session = await events.nextJSON()
        let conversation = try #require(session?["conversation_id"] as? String)
        #expect(await Self.sendWord(connection, events, text: "hello", at: 0))
        connection.send(.text(#"{"type":"finalize"}"#))
        #expect(await events.closeCode() == 1000)

        let secret = String(token.suffix(64))
        let database = try PGConnection(connectionString: try #require(app.databaseConnectionString))
        let stored = try database.query("SELECT device_id, conversations::text AS row FROM conversations WHERE id = $1", [conversation]).rows[0]
        #expect(try stored.decode(String.self, column: "device_id") == "browser")
        #expect(try !stored.decode(String.self, column: "row").contains(secret))
        let lines = log.lines
        #expect(!lines.isEmpty)
        for line in lines {
            #expect(!line.message.contains(secret) && !line.metadata.values.contains { $0.contains(secret) }, "\(line.message)")
            #expect(!line.message.contains(TestServer.adminKey) && !line.metadata.values.contains { $0.contains(TestServer.adminKey) })
        }
    }

    // MARK: Admin key

    @Test func aGeneratedAdminKeyIsWrittenOnceStoredAsADigestAndRotates() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-admin-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyFile = folder.appendingPathComponent("admin-key").path
        let database = try TestCluster.freshDatabase()
        var first: SpeakerSyncApplication? = SpeakerSyncApplication(config: Self.config(database) {
            $0.access.environmentAdminKey = nil
            $0.access.adminKeyFile = keyFile
        }, logger: Self.logger)
        let port = try first!.start()
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let key = try String(contentsOfFile: keyFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Credential.parse(key)?.kind == .adminKey)
        let http = "http://127.0.0.1:\(port)"
        #expect(try SimpleHTTPClient.get(http + "/v1/tokens", token: key).status == 200)
        let digests = try PGConnection(connectionString: database).query("SELECT digest FROM admin_keys WHERE revoked_at IS NULL", [])
        #expect(try digests.rows.map { try $0.decode(String.self, column: "digest") } == [Credential.digest(of: key)])

        // A session opened with the old key ends when the key is rotated; the new key works, the old does not.
        let client = try WebSocketClient(logger: Self.logger)
        defer { client.shutdown() }
        let (_, events) = try Self.open(client, "ws://127.0.0.1:\(port)/v1/listen", headers: [("authorization", "Bearer \(key)")],
                                       start: Self.start(device: "admin-phone"))
        #expect(await events.nextJSON()?["type"] as? String == "session")
        let rotated = try SimpleHTTPClient.request(method: "POST", url: http + "/v1/admin/key", body: [], token: key)
        #expect(rotated.status == 201)
        let newKey = try #require((rotated.json() as? [String: Any])?["admin_key"] as? String)
        #expect(await events.nextJSON()?["code"] as? String == "credential_revoked")
        #expect(await events.closeCode() == 4003)
        #expect(try SimpleHTTPClient.get(http + "/v1/tokens", token: key).status == 401)
        #expect(try SimpleHTTPClient.get(http + "/v1/tokens", token: newKey).status == 200)
        first?.shutdown()
        first = nil

        // A restart on the same database keeps the rotated key and prints none.
        try FileManager.default.removeItem(atPath: keyFile)
        let second = SpeakerSyncApplication(config: Self.config(database) {
            $0.access.environmentAdminKey = nil
            $0.access.adminKeyFile = keyFile
        }, logger: Self.logger)
        let secondPort = try second.start()
        defer { second.shutdown() }
        #expect(!FileManager.default.fileExists(atPath: keyFile))
        #expect(try SimpleHTTPClient.get("http://127.0.0.1:\(secondPort)/v1/tokens", token: newKey).status == 200)
    }

    @Test func unsafeSettingsAreRefusedAtStart() throws {
        let database = try TestCluster.freshDatabase()
        for adjust in [{ (config: inout ServerConfig) in config.host = "0.0.0.0"; config.access.mode = .off },
                       { (config: inout ServerConfig) in config.access.environmentAdminKey = "short" }] {
            let app = SpeakerSyncApplication(config: Self.config(database, adjust), logger: Self.logger)
            #expect(throws: ServerError.self) { try app.start() }
            do { try app.start() } catch let error as ServerError { #expect(error.code == .insecureConfig) }
        }
        // Off on loopback: everyone is admin.
        let open = SpeakerSyncApplication(config: Self.config(database) { $0.access.mode = .off }, logger: Self.logger)
        let port = try open.start()
        defer { open.shutdown() }
        #expect(try SimpleHTTPClient.get("http://127.0.0.1:\(port)/v1/conversations").status == 200)
    }

    @Test func aRevocationOnOneServerClosesTheSessionOnAnotherSharingTheDatabase() async throws {
        let one = try TestServer { $0.access.refreshSeconds = 0.2 }
        let two = try TestServer(database: one.connectionString) { $0.access.refreshSeconds = 0.2 }
        let token = try Self.token(one, device: "phone-shared")
        let tokenID = try #require(Credential.parse(token)?.id)
        let client = try WebSocketClient(logger: Self.logger)
        defer { client.shutdown() }
        // Server two learns the token from the database (it was created on server one).
        var events: EventReader?
        for _ in 0..<150 where events == nil {
            let (connection, reader) = try Self.open(client, two.ws, headers: [("authorization", "Bearer \(token)")], start: nil)
            if await Self.accepted(connection).accepted { events = reader; connection.send(.text(Self.start(device: nil))) } else {
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let session = try #require(events)
        #expect(await session.nextJSON()?["type"] as? String == "session")
        #expect(try one.request("DELETE", "/v1/devices/phone-shared/tokens/\(tokenID)").status == 200)
        #expect(await session.nextJSON()?["code"] as? String == "credential_revoked")
        #expect(await session.closeCode() == 4003)
    }

    // MARK: Limits

    @Test func aDeviceRunsOnlySoManySessionsAndHoldsOnlySoManyConnections() async throws {
        let server = try TestServer {
            $0.access.maxSessionsPerDevice = 1
            $0.access.maxConnectionsPerDevice = 2
        }
        let token = try Self.token(server, device: "phone-l")
        let auth = [("authorization", "Bearer \(token)")]
        let client = try WebSocketClient(logger: Self.logger)
        defer { client.shutdown() }
        let (first, firstEvents) = try Self.open(client, server.ws, headers: auth, start: Self.start(device: nil))
        #expect(await firstEvents.nextJSON()?["type"] as? String == "session")
        // A second session of the same device: refused with too_many_sessions and 4029.
        let (_, second) = try Self.open(client, server.ws, headers: auth, start: Self.start(device: nil))
        let refused = await second.nextJSON()
        #expect(refused?["code"] as? String == "too_many_sessions")
        #expect(await second.closeCode() == 4029)
        // Another device is not affected.
        let (_, other) = try Self.open(client, server.ws, headers: server.authorization, start: Self.start(device: "phone-other"))
        #expect(await other.nextJSON()?["type"] as? String == "session")
        // Two connections held (one idle without a start): a third upgrade is refused with 429.
        let (idle, _) = try Self.open(client, server.ws, headers: auth, start: nil)
        #expect(await Self.accepted(idle).accepted)
        let (third, _) = try Self.open(client, server.ws, headers: auth, start: nil)
        let outcome = await Self.accepted(third)
        #expect(!outcome.accepted)
        // When the first session ends, the device may start another.
        first.send(.text(#"{"type":"finalize"}"#))
        #expect(await firstEvents.closeCode() == 1000)
        idle.close(code: 1000, reason: "done")
        // The counts drop when the server sees the sockets close, which it does on its own thread.
        var startedAgain = false
        for _ in 0..<150 where !startedAgain {
            let (probe, events) = try Self.open(client, server.ws, headers: auth, start: Self.start(device: nil))
            startedAgain = await events.nextJSON()?["type"] as? String == "session"
            probe.close(code: 1000, reason: "probe")
            _ = await events.closeCode()
            if !startedAgain { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(startedAgain)
    }

    @Test func aCredentialOverItsRateGets429WithRetryAfter() throws {
        let server = try TestServer {
            $0.access.requestsPerSecond = 0.01 // a token every 100 s: the burst is all there is in this test
            $0.access.requestBurst = 3
        }
        let token = try Self.token(server, device: "phone-rate") // the admin's request, not the token's
        for _ in 0..<3 { #expect(try server.request("GET", "/v1/conversations", token: token).status == 200) }
        let limited = try server.request("GET", "/v1/conversations", token: token)
        #expect(limited.status == 429)
        #expect(Self.code(limited) == "rate_limited")
        #expect((limited.headers["retry-after"].flatMap(Int.init) ?? 0) >= 1)
        // Per credential: the admin still has its own budget.
        #expect(try server.request("GET", "/v1/conversations").status == 200)
    }

    @Test func connectionsBeyondTheLimitGet503AndIdleUnauthenticatedSocketsAreClosed() throws {
        let server = try TestServer {
            $0.maxConnections = 2
            $0.handshakeTimeoutSeconds = 1
        }
        // Two keep-alive connections that each made a request hold both places.
        var held: [RawConnection] = []
        for _ in 0..<2 {
            let connection = try RawConnection(port: server.port)
            try connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            let head = try connection.readHead()
            #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
            let length = Int(head.lowercased().components(separatedBy: "content-length: ").last?.prefix { $0.isNumber } ?? "0") ?? 0
            _ = try connection.read(count: length)
            held.append(connection)
        }
        let third = try RawConnection(port: server.port)
        try third.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let busy = try third.readHead()
        #expect(busy.hasPrefix("HTTP/1.1 503"), "\(busy)")
        #expect(busy.lowercased().contains("retry-after: "))
        held.removeAll()

        // A socket that sends nothing, and one that stops mid-request, are closed by the server
        // (handshake timeout 1 s; the read below gives up only after 30 s).
        let silent = try RawConnection(port: server.port, timeoutSeconds: 30)
        let partial = try RawConnection(port: server.port, timeoutSeconds: 30)
        try partial.send("GET /v1/conversations HTTP/1.1\r\nHost: x\r\n")
        #expect(silent.waitUntilClosed())
        #expect(partial.waitUntilClosed())
    }

    @Test func tokensWorkOverTLSEndToEnd() async throws {
        let certificates = try TestCertificates.get()
        let server = try TestServer {
            $0.tlsCertificatePath = certificates.certificate
            $0.tlsPrivateKeyPath = certificates.key
        }
        let https = "https://127.0.0.1:\(server.port)"
        let created = try SimpleHTTPClient.request(method: "POST", url: https + "/v1/devices/phone-tls/tokens", body: [],
                                                   token: server.adminKey, caFilePath: certificates.certificate)
        #expect(created.status == 201)
        let token = try #require((created.json() as? [String: Any])?["token"] as? String)
        #expect(try SimpleHTTPClient.get(https + "/v1/conversations", caFilePath: certificates.certificate).status == 401)
        let client = try WebSocketClient(caFilePath: certificates.certificate, logger: Self.logger)
        defer { client.shutdown() }
        let (connection, events) = try Self.open(client, "wss://127.0.0.1:\(server.port)/v1/listen", headers: [("authorization", "Bearer \(token)")],
                                                 start: Self.start(device: nil))
        let conversation = try #require(await events.nextJSON()?["conversation_id"] as? String)
        #expect(await Self.sendWord(connection, events, text: "secure", at: 0))
        connection.send(.text(#"{"type":"finalize"}"#))
        #expect(await events.closeCode() == 1000)
        let transcript = try SimpleHTTPClient.get(https + "/v1/conversations/\(conversation)/transcript?format=text", token: token,
                                                  caFilePath: certificates.certificate)
        #expect(transcript.status == 200 && transcript.text.contains("secure"))
    }

    static func config(_ database: String, _ adjust: (inout ServerConfig) -> Void = { _ in }) -> ServerConfig {
        var config = ServerConfig.default
        config.port = 0
        config.session.idleIntervalSeconds = 600
        config.databaseURL = database
        config.access.environmentAdminKey = TestServer.adminKey
        adjust(&config)
        return config
    }
}
