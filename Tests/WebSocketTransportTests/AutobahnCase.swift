import Foundation
import Testing
import TestSupport
@testable import WebSocketTransport

/// One of the Autobahn testsuite's server cases (crossbario/autobahn-testsuite, autobahn/case/*.py),
/// written again as the frames a raw client sends and what the server must answer: the events it
/// sends before its close frame, then a close frame with one of the allowed codes, and nothing after.
/// A close frame is required: dropping TCP instead fails the case.
struct AutobahnCase: Sendable, CustomTestStringConvertible {
    enum Step: Sendable {
        /// Frames in one write.
        case send([RawFrame])
        /// One write per frame.
        case sendFramewise([RawFrame])
        /// One write per byte.
        case sendOctetwise([RawFrame])
        /// Frames without the mask a client must set.
        case sendUnmasked([RawFrame])
        /// Bytes as they are (a frame cut into chops, a header that lies).
        case sendBytes([UInt8])
        /// Waits until the server has sent this many events (a pong, an echo) before going on.
        case awaitEvents(Int)
        /// Gives the server time to act on what it has (Autobahn's pauses between parts of a message).
        case pause(milliseconds: Int)
    }

    let id: String
    let steps: [Step]
    /// What the server may send before its close frame, in order (one of these lists).
    let before: [[WebSocketEvent]]
    /// The codes its close frame may carry (nil: an empty close payload).
    let closeCodes: Set<UInt16?>

    init(_ id: String, _ steps: [Step], before: [WebSocketEvent] = [], orBefore alternatives: [[WebSocketEvent]] = [], close: Set<UInt16?>) {
        self.id = id
        self.steps = steps
        self.before = [before] + alternatives
        self.closeCodes = close
    }

    var testDescription: String { "Autobahn \(id)" }

    /// Runs the case against a fresh echo server.
    func run(config: WebSocketServerConfig = .default) async throws -> (events: [WebSocketEvent], end: RawConnection.End?) {
        let steps = self.steps
        return try await Blocking.run {
            let handler = ScriptedHandler()
            let (server, port) = try startServer(handler, config: config)
            defer { server.shutdown() }
            let socket = try RawWebSocket(port: port)
            do {
                for step in steps {
                    switch step {
                    case .send(let frames): try socket.send(frames)
                    case .sendFramewise(let frames): try socket.sendFramewise(frames)
                    case .sendOctetwise(let frames): try socket.sendOctetwise(frames)
                    case .sendUnmasked(let frames): try socket.send(frames, masked: false)
                    case .sendBytes(let bytes): try socket.send(bytes: bytes)
                    case .awaitEvents(let count): socket.read(events: count)
                    case .pause(let milliseconds): Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
                    }
                }
            } catch {
                // The server may close before the client is done sending (it failed the connection
                // early, as it should); what it sent is judged below.
            }
            return (socket.readToEnd(), socket.end)
        }
    }

    /// Runs the case and checks the server's answer.
    func check(config: WebSocketServerConfig = .default) async throws {
        let (events, end) = try await run(config: config)
        guard case .close(let code)? = events.last else {
            Issue.record("Autobahn \(id): no close frame last; the server sent \(events) and the connection ended \(String(describing: end))")
            return
        }
        #expect(closeCodes.contains(code), "Autobahn \(id): close code \(String(describing: code)), expected one of \(closeCodes)")
        #expect(before.contains(Array(events.dropLast())), "Autobahn \(id): before the close \(Array(events.dropLast())), expected \(before)")
        #expect(end == .closed || end == .reset, "Autobahn \(id): the server did not end the connection (\(String(describing: end)))")
    }
}

extension AutobahnCase {
    /// A clean close started by the client, the way an OK case ends.
    static let closeNormally = RawFrame.close(1000)

    /// A case that must succeed: after `steps` the client waits for every expected event, then
    /// closes with 1000, which the server echoes. (A close arriving while an echo is still queued
    /// is answered before the echo, which is then dropped: lws writes the close echo first, and
    /// nothing may follow it.)
    static func ok(_ id: String, _ steps: [Step], _ events: [WebSocketEvent]) -> AutobahnCase {
        AutobahnCase(id, steps + [.awaitEvents(events.count), .send([closeNormally])], before: events, close: [1000])
    }

    /// `count` bytes of Autobahn's filler ("*" for text, 0xFE for binary).
    static func filler(_ count: Int, byte: UInt8 = UInt8(ascii: "*")) -> [UInt8] {
        [UInt8](repeating: byte, count: count)
    }
}
