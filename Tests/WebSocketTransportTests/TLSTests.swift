import Foundation
import SpeakerSyncClient
import Synchronization
import Testing
import TestSupport
@testable import WebSocketTransport


/// Answers GET /whoami with the Authorization header it saw (so extra client headers are visible).
final class WhoAmIHandler: HTTPHandler {
    func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        if request.path == "/whoami" {
            respond(.text("authorization=\(request.headers["authorization"] ?? "-")"))
        } else {
            respond(.json(status: 404, #"{"error":"not_found"}"#))
        }
    }
}

@Suite("TLS: wss:// and https:// on one port, verified clients")
struct TLSTests {
    private func startTLSServer(_ handler: ScriptedHandler = ScriptedHandler(), certificate: String? = nil,
                                key: String? = nil) throws -> (WebSocketServer, Int) {
        let files = try TestCertificates.get()
        var config = WebSocketServerConfig.default
        config.tls = TLSFiles(certificatePath: certificate ?? files.certificate, privateKeyPath: key ?? files.key)
        return try startServer(handler, http: WhoAmIHandler(), config: config)
    }

    /// Events of a connection that must fail: it ends without ever being connected.
    private func expectRefused(_ client: WebSocketClient, _ url: String) async throws {
        let connection = try client.connect(url: url)
        connection.send(.text("must not arrive"))
        let events = try await collect(connection) { events in
            events.contains { if case .disconnected = $0 { return true } else { return false } }
        }
        #expect(!events.contains(.connected))
        #expect(messages(events).isEmpty)
    }

    @Test func wssEchoRoundTripWithCAFile() async throws {
        let files = try TestCertificates.get()
        let handler = ScriptedHandler()
        let (server, port) = try startTLSServer(handler)
        defer { server.shutdown() }
        let client = try WebSocketClient(caFilePath: files.certificate, logger: testLogger())
        defer { client.shutdown() }

        for host in ["127.0.0.1", "localhost"] { // IP SAN and DNS SAN
            let connection = try client.connect(url: "wss://\(host):\(port)/v1/listen?device_id=tls")
            let bytes: [UInt8] = [0, 1, 2, 255]
            connection.send(.text("héllo over tls"))
            connection.send(.binary(bytes))
            let events = try await collect(connection) { messages($0).count == 2 }
            #expect(events.first == .connected)
            #expect(messages(events) == [.text("héllo over tls"), .binary(bytes)])
            connection.close()
        }
        let opened = handler.log.withLock { $0.opened }
        #expect(opened.count == 2)
        #expect(opened.first?.1.query == ["device_id": "tls"])
    }

    @Test func httpsGetThroughSimpleHTTPClientWithCAFile() throws {
        let files = try TestCertificates.get()
        let (server, port) = try startTLSServer()
        defer { server.shutdown() }

        let response = try SimpleHTTPClient.get("https://127.0.0.1:\(port)/whoami", timeoutSeconds: 10,
                                                headers: [("Authorization", "Bearer t0ken")], caFilePath: files.certificate)
        #expect(response.status == 200)
        #expect(response.text == "authorization=Bearer t0ken")
        let byName = try SimpleHTTPClient.get("https://localhost:\(port)/nowhere", timeoutSeconds: 10, caFilePath: files.certificate)
        #expect(byName.status == 404)
    }

    @Test func clientsWithoutTheCAFileAreRefused() async throws {
        let handler = ScriptedHandler()
        let (server, port) = try startTLSServer(handler)
        defer { server.shutdown() }
        let client = try WebSocketClient(tls: true, logger: testLogger()) // the OS store does not know this certificate
        defer { client.shutdown() }

        try await expectRefused(client, "wss://127.0.0.1:\(port)/v1/listen")
        #expect(handler.log.withLock { $0.opened.isEmpty && $0.received.isEmpty })

        let error = #expect(throws: SimpleHTTPError.self) {
            try SimpleHTTPClient.get("https://127.0.0.1:\(port)/whoami", timeoutSeconds: 10)
        }
        #expect(error?.description.contains("self-signed") == true)
    }

    @Test func certificateForAnotherNameIsRefused() async throws {
        let files = try TestCertificates.get()
        // Trusted (it is the CA file) but issued to other.example, not 127.0.0.1 / localhost.
        let handler = ScriptedHandler()
        let (server, port) = try startTLSServer(handler, certificate: files.otherCertificate, key: files.otherKey)
        defer { server.shutdown() }
        let client = try WebSocketClient(caFilePath: files.otherCertificate, logger: testLogger())
        defer { client.shutdown() }

        try await expectRefused(client, "wss://127.0.0.1:\(port)/v1/listen")
        try await expectRefused(client, "wss://localhost:\(port)/v1/listen")
        #expect(handler.log.withLock { $0.opened.isEmpty })

        for host in ["127.0.0.1", "localhost"] {
            let error = #expect(throws: SimpleHTTPError.self) {
                try SimpleHTTPClient.get("https://\(host):\(port)/whoami", timeoutSeconds: 10, caFilePath: files.otherCertificate)
            }
            #expect(error?.description.contains("mismatch") == true)
        }
    }

    @Test func plaintextClientsGetNoService() async throws {
        let handler = ScriptedHandler()
        let (server, port) = try startTLSServer(handler)
        defer { server.shutdown() }
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }

        try await expectRefused(client, "ws://127.0.0.1:\(port)/v1/listen")
        #expect(handler.log.withLock { $0.opened.isEmpty && $0.received.isEmpty })
        // No HTTP response at all, not even an error page in clear.
        #expect(throws: RawHTTPError.self) { try rawHTTP(port: port, "GET /whoami HTTP/1.1\r\nHost: x\r\n\r\n") }
        #expect(throws: SimpleHTTPError.self) { try SimpleHTTPClient.get("http://127.0.0.1:\(port)/whoami", timeoutSeconds: 10) }
    }

    @Test func badCertificateOrKeyThrowsTransportError() throws {
        let files = try TestCertificates.get()
        func attempt(_ certificate: String, _ key: String) -> TransportError.Code? {
            var config = WebSocketServerConfig.default
            config.tls = TLSFiles(certificatePath: certificate, privateKeyPath: key)
            do {
                let server = try WebSocketServer(config: config, webSocketHandler: ScriptedHandler(), httpHandler: nil, logger: testLogger())
                server.shutdown()
                return nil
            } catch let error as TransportError {
                return error.code
            } catch {
                return nil
            }
        }
        let missing = files.directory + "/missing.pem"
        #expect(attempt(missing, files.key) == .tlsFileUnreadable)
        #expect(attempt(files.certificate, missing) == .tlsFileUnreadable)
        #expect(attempt(files.directory, files.key) == .tlsFileUnreadable) // a folder
        #expect(attempt(files.key, files.certificate) == .tlsFileInvalid) // swapped
        // Past the PEM markers, so lws/OpenSSL must reject them in lws_create_context, cleanly.
        #expect(attempt(files.garbage, files.key) == .contextCreationFailed)
        #expect(attempt(files.certificate, files.otherKey) == .contextCreationFailed) // key of another certificate

        let noCA = #expect(throws: TransportError.self) { try WebSocketClient(caFilePath: missing, logger: testLogger()) }
        #expect(noCA?.code == .tlsFileUnreadable)
        let keyAsCA = #expect(throws: TransportError.self) { try WebSocketClient(caFilePath: files.key, logger: testLogger()) }
        #expect(keyAsCA?.code == .tlsFileInvalid)

        // The failures left nothing behind: a good server still starts and serves.
        let (server, port) = try startTLSServer()
        defer { server.shutdown() }
        #expect(try SimpleHTTPClient.get("https://127.0.0.1:\(port)/whoami", timeoutSeconds: 10, caFilePath: files.certificate).status == 200)
    }
}
