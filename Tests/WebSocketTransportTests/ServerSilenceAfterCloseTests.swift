import Foundation
import Synchronization
import Testing
import TestSupport
@testable import WebSocketTransport

/// RFC 6455 §5.5.1: after sending a close frame, an endpoint sends no more data. lws 4.1.6 keeps
/// calling SERVER_WRITEABLE after the server's close frame and writes whatever it is handed, so the
/// transport must stay silent itself, whoever began the close and whatever the application still sends.
/// These clients never answer the close: they watch the whole time until the server drops the socket.
@Suite("The server sends nothing after its close frame")
struct ServerSilenceAfterCloseTests {
    /// Sends "bg N" to a connection from a thread of its own until stopped (a session's updates).
    final class Flood: Sendable {
        private let stopped = Mutex(false)
        func start(_ server: WebSocketServer, _ id: ConnectionID) {
            Thread.detachNewThread { [self] in
                var index = 0
                while !stopped.withLock({ $0 }) {
                    server.send(.text("bg \(index)"), to: id)
                    index += 1
                    if index % 10 == 0 { Thread.sleep(forTimeInterval: 0.001) }
                }
            }
        }
        func stop() { stopped.withLock { $0 = true } }
    }

    /// Opens a connection to a server whose handler floods it, lets `breakIt` misbehave once the first
    /// message arrived, and returns everything the server sent until it dropped the socket.
    static func flooded(_ breakIt: @escaping @Sendable (RawWebSocket) throws -> Void) async throws -> (events: [WebSocketEvent], end: RawConnection.End?) {
        let flood = Flood()
        defer { flood.stop() }
        let handler = ScriptedHandler(onOpened: { server, id in flood.start(server, id) }, onReceived: { _, _, _ in })
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        return try await Blocking.run {
            let socket = try RawWebSocket(port: port)
            socket.read(events: 1)
            try breakIt(socket)
            return (socket.readToEnd(replyingToClose: false), socket.end)
        }
    }

    static func expectCloseLast(_ outcome: (events: [WebSocketEvent], end: RawConnection.End?), code: UInt16) {
        #expect(outcome.events.last == .close(code: code), "last events: \(outcome.events.suffix(3)), ended \(String(describing: outcome.end))")
        #expect(outcome.events.filter { if case .close = $0 { return true } else { return false } }.count == 1)
        #expect(outcome.events.dropLast().allSatisfy { if case .text(let text) = $0 { return text.hasPrefix("bg ") } else { return false } })
        #expect(outcome.end == .closed || outcome.end == .reset)
    }

    @Test func afterAnUnmaskedFrameWhileTheApplicationKeepsSending() async throws {
        let outcome = try await Self.flooded { try $0.send([.text("no mask")], masked: false) }
        Self.expectCloseLast(outcome, code: 1002)
    }

    @Test func afterInvalidUTF8WhileTheApplicationKeepsSending() async throws {
        let outcome = try await Self.flooded { try $0.send([.text(bytes: [0x68, 0x69, 0xFF])]) }
        Self.expectCloseLast(outcome, code: 1007)
    }

    @Test func afterAnOversizedPingWhileTheApplicationKeepsSending() async throws {
        let outcome = try await Self.flooded { try $0.send([.ping(AutobahnCase.filler(126))]) }
        Self.expectCloseLast(outcome, code: 1002)
    }

    @Test func afterTheClientsCloseWhileTheApplicationKeepsSending() async throws {
        let outcome = try await Self.flooded { try $0.send([.close(4321)]) }
        Self.expectCloseLast(outcome, code: 4321)
    }

    @Test func afterTheApplicationsOwnCloseWhatItSendsLaterIsDropped() async throws {
        let handler = ScriptedHandler(onReceived: { server, id, message in
            guard message == .text("close me") else { return }
            server.send(.text("last words"), to: id)
            server.close(id, code: 4001, reason: "session over")
            Thread.detachNewThread {
                for index in 0..<200 { server.send(.text("late \(index)"), to: id) }
            }
        })
        let (server, port) = try startServer(handler)
        defer { server.shutdown() }
        let (events, end) = try await Blocking.run {
            let socket = try RawWebSocket(port: port)
            try socket.send([.text("close me")])
            return (socket.readToEnd(replyingToClose: false), socket.end)
        }
        #expect(events == [.text("last words"), .close(code: 4001)])
        #expect(end == .closed || end == .reset)
    }
}
