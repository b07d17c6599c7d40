import Foundation
import Synchronization
import Testing
@testable import WebSocketTransport

@Suite("WebSocket server and client over real loopback sockets")
struct WebSocketServerTests {
    @Test func echoesTextAndBinary() async throws {
        let handler = ScriptedHandler()
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }

        let connection = try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen?device_id=dev%201&x=%26y")
        let bytes: [UInt8] = [0, 1, 2, 255, 128, 7]
        connection.send(.text("héllo ✓"))
        connection.send(.binary(bytes))
        let events = try await collect(connection) { messages($0).count == 2 }
        #expect(events.first == .connected)
        #expect(messages(events) == [.text("héllo ✓"), .binary(bytes)])

        let opened = handler.log.withLock { $0.opened }
        #expect(opened.count == 1)
        #expect(opened.first?.1.path == "/v1/listen")
        #expect(opened.first?.1.query == ["device_id": "dev 1", "x": "&y"])
        #expect(opened.first?.1.remoteAddress == "127.0.0.1")
    }

    @Test func roundTripsOneMegabyteBinaryMessage() async throws {
        let handler = ScriptedHandler()
        let (server, port) = try startServer(handler) // default limit is exactly 1 MiB
        defer { server.shutdown() }
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }

        let payload = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let connection = try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen")
        connection.send(.binary(payload))
        let events = try await collect(connection) { messages($0).count == 1 }
        #expect(messages(events) == [.binary(payload)])
        #expect(handler.log.withLock { $0.received.count } == 1)
        #expect(handler.log.withLock { $0.rejected.isEmpty })
    }

    @Test func rejectsOversizedMessageAndKeepsConnection() async throws {
        let handler = ScriptedHandler(onRejected: { server, id, reason in
            if case .messageTooLarge(let count, let limit) = reason {
                server.send(.text("rejected \(count) > \(limit)"), to: id)
            }
        })
        var config = WebSocketServerConfig.default
        config.maxMessageBytes = 1000
        let (server, port) = try startServer(handler, config: config)
        defer { server.shutdown() }
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }

        let connection = try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen")
        connection.send(.binary([UInt8](repeating: 9, count: 5000)))
        connection.send(.text("still here"))
        let events = try await collect(connection) { messages($0).count == 2 }
        #expect(messages(events) == [.text("rejected 5000 > 1000"), .text("still here")])
        let log = handler.log.withLock { $0 }
        #expect(log.rejected.map(\.1) == [.messageTooLarge(byteCount: 5000, limit: 1000)])
        #expect(log.received.map(\.1) == [.text("still here")])
    }

    @Test func serverCloseDeliversQueuedMessagesThenCodeAndReason() async throws {
        let handler = ScriptedHandler(onReceived: { server, id, message in
            guard message == .text("close me") else { return }
            server.send(.text("last words"), to: id)
            server.close(id, code: 4001, reason: "session over")
            server.send(.text("after close"), to: id) // dropped: the close is already queued
        })
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }

        let connection = try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen")
        connection.send(.text("close me"))
        let events = try await collect(connection) { _ in false }
        #expect(events == [.connected, .message(.text("last words")), .disconnected(code: 4001, reason: "session over")])
        try await eventually("server closed callback") { handler.log.withLock { $0.closed.count == 1 } }
    }

    @Test func clientCloseCodeReachesServer() async throws {
        let handler = ScriptedHandler()
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }

        let connection = try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen")
        connection.send(.text("one"))
        connection.close(code: 4002, reason: "bye")
        let events = try await collect(connection) { _ in false }
        #expect(messages(events) == [.text("one")] || messages(events).isEmpty) // the echo may race the close
        try await eventually("server saw close 4002") { handler.log.withLock { $0.closed.first?.1 == 4002 } }
    }

    @Test func sendsFromBackgroundThreadWhileReceiving() async throws {
        let count = 300
        let handler = ScriptedHandler(
            onOpened: { server, id in
                Thread.detachNewThread {
                    for index in 0..<count { server.send(.text("bg \(index)"), to: id) }
                }
            },
            onReceived: { server, id, message in
                if case .text(let text) = message { server.send(.text("echo \(text)"), to: id) }
            })
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }

        let connection = try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen")
        for index in 0..<count { connection.send(.text("c \(index)")) }
        let events = try await collect(connection) { messages($0).count == 2 * count }
        let texts = messages(events).compactMap { if case .text(let t) = $0 { return t } else { return nil } }
        #expect(texts.filter { $0.hasPrefix("bg ") } == (0..<count).map { "bg \($0)" })
        #expect(texts.filter { $0.hasPrefix("echo ") } == (0..<count).map { "echo c \($0)" })
        let serverID = try #require(handler.log.withLock { $0.opened.first?.0 })
        try await eventually("server outbox drained") { server.queuedBytes(for: serverID) == 0 }
    }

    @Test func fiftyConcurrentClientsEchoInOrder() async throws {
        let clients = 50
        let perClient = 20
        let handler = ScriptedHandler()
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }

        let connections = try (0..<clients).map { _ in try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen") }
        try await withThrowingTaskGroup(of: (Int, [WebSocketMessage]).self) { group in
            for (index, connection) in connections.enumerated() {
                group.addTask {
                    for message in 0..<perClient { connection.send(.text("client \(index) message \(message)")) }
                    let events = try await collect(connection, until: { messages($0).count == perClient }, timeout: 60)
                    return (index, messages(events))
                }
            }
            for try await (index, received) in group {
                #expect(received == (0..<perClient).map { .text("client \(index) message \($0)") })
            }
        }
        #expect(handler.log.withLock { $0.opened.count } == clients)
        #expect(handler.log.withLock { $0.received.count } == clients * perClient)
    }

    @Test func shutdownWithOpenConnectionsClosesThemAndIsIdempotent() async throws {
        let handler = ScriptedHandler()
        let (server, port) = try startServer(handler)
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }

        let connections = try (0..<5).map { _ in try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen") }
        for connection in connections {
            connection.send(.text("ping"))
            _ = try await collect(connection) { messages($0).count == 1 }
        }
        server.shutdown()
        server.shutdown()
        #expect(handler.log.withLock { $0.closed.count } == 5)
        for connection in connections {
            let rest = try await collect(connection) { _ in false }
            #expect(rest.count == 1)
            if case .disconnected? = rest.last {} else { Issue.record("expected disconnected, got \(rest)") }
        }
        server.send(.text("into the void"), to: ConnectionID(rawValue: 1)) // no crash after shutdown
        #expect(throws: TransportError.self) { try server.start() }
    }

    @Test func clientShutdownWithOpenConnectionsReportsDisconnects() async throws {
        let handler = ScriptedHandler()
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        let client = try WebSocketClient(logger: testLogger())
        let connection = try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen")
        connection.send(.text("hi"))
        _ = try await collect(connection) { messages($0).count == 1 }
        client.shutdown()
        let rest = try await collect(connection) { _ in false }
        #expect(rest.count == 1)
        try await eventually("server saw the client go") { handler.log.withLock { $0.closed.count == 1 } }
        #expect(throws: TransportError.self) { _ = try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen") }
    }

    @Test func connectionFailureIsReportedAsDisconnect() async throws {
        // Bind a server to learn a free port, then shut it down so nothing listens there.
        let probe = try WebSocketServer(webSocketHandler: ScriptedHandler(), httpHandler: nil, logger: testLogger())
        let port = probe.port
        probe.shutdown()
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }
        let connection = try client.connect(url: "ws://127.0.0.1:\(port)/v1/listen")
        let events = try await collect(connection) { _ in false }
        #expect(events.count == 1)
        if case .disconnected(let code, let reason)? = events.first {
            #expect(code == nil)
            #expect(reason != nil)
        } else {
            Issue.record("expected disconnected, got \(events)")
        }
    }

    @Test func upgradeOnOtherPathIsRefused() async throws {
        let handler = ScriptedHandler()
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }
        let connection = try client.connect(url: "ws://127.0.0.1:\(port)/not-here")
        let events = try await collect(connection) { _ in false }
        #expect(!events.contains(.connected))
        #expect(handler.log.withLock { $0.opened.isEmpty })

        let raw = try rawHTTP(port: port, "GET /elsewhere HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(raw.status == 404)
    }

    @Test func invalidURLsThrow() throws {
        let client = try WebSocketClient(logger: testLogger())
        defer { client.shutdown() }
        // wss:// is supported now (TLSTests); a wss URL without a host is still malformed.
        for url in ["http://127.0.0.1/", "ws://", "ws://host:notaport/", "wss://", "https://secure/"] {
            #expect(throws: TransportError.self) { _ = try client.connect(url: url, handler: NullClientHandler()) }
        }
    }

    /// lws only logs the bind's errno; the error says what is wrong in words.
    @Test func busyPortFailsAtInitSayingAddressAlreadyInUse() throws {
        let (server, port) = try startServer(ScriptedHandler())
        defer { server.shutdown() }
        var config = WebSocketServerConfig.default
        config.port = port
        do {
            _ = try WebSocketServer(config: config, webSocketHandler: ScriptedHandler(), httpHandler: nil, logger: testLogger())
            Issue.record("second bind to \(port) succeeded")
        } catch let error as TransportError {
            #expect(error.code == .addressInUse)
            #expect(error.message == "port \(port): address already in use")
        }
    }
}

final class NullClientHandler: WebSocketClientHandler {
    func connected(_ connection: ConnectionID) {}
    func received(_ connection: ConnectionID, message: WebSocketMessage) {}
    func disconnected(_ connection: ConnectionID, code: UInt16?, reason: String?) {}
}
