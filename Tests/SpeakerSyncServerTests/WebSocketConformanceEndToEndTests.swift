import Foundation
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// The session layer behind the transport's RFC 6455 guarantees: once the server has sent its close
/// frame (a transport failure, 1002 or 1007, or the session's own close), nothing follows it, not even
/// the `session` answer to a start the server was still handling. The raw clients never answer the
/// close, so they watch until the server drops the socket.
@Suite(.serialized) struct WebSocketConformanceEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    /// Opens a raw WebSocket as the admin, sends `frames` in one write (after a start, unless
    /// `start` is nil) and returns everything the server sent until it ended the connection.
    static func exchange(_ server: TestServer, start: String? = SecurityEndToEndTests.start(device: "raw-phone"),
                         then frames: [RawFrame], masked: Bool = true) async throws -> [WebSocketEvent] {
        let port = server.port, authorization = server.authorization
        return try await Blocking.run {
            let socket = try RawWebSocket(port: port, headers: authorization)
            let startBytes = start.map { RawFrame.text($0).encoded() } ?? []
            try socket.send(bytes: startBytes + frames.flatMap { $0.encoded(masked: masked) })
            return socket.readToEnd(replyingToClose: false)
        }
    }

    static func messageTypes(_ events: [WebSocketEvent]) -> [String] {
        events.compactMap { event in
            guard case .text(let text) = event,
                  let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
            return object["type"] as? String
        }
    }

    static func expectCloseLast(_ events: [WebSocketEvent], code: UInt16?, _ comment: Comment? = nil) {
        #expect(events.last.map { if case .close = $0 { return true } else { return false } } == true, "\(events)")
        if let code { #expect(events.last == .close(code: code), "\(events)") }
        #expect(events.filter { if case .close = $0 { return true } else { return false } }.count == 1, "\(events)")
    }

    @Test func invalidUTF8RightAfterTheStartClosesWith1007AndNoSessionFollows() async throws {
        let server = try TestServer()
        let events = try await Self.exchange(server, then: [.text(bytes: [0x7B, 0xFF, 0x7D])])
        Self.expectCloseLast(events, code: 1007)
    }

    @Test func anUnmaskedFrameRightAfterTheStartClosesWith1002AndNoSessionFollows() async throws {
        let server = try TestServer()
        let events = try await Self.exchange(server, then: [.text(#"{"type":"finalize"}"#)], masked: false)
        Self.expectCloseLast(events, code: 1002)
    }

    @Test func aMalformedCloseAfterTheSessionStartedIsAnsweredWith1002() async throws {
        let server = try TestServer()
        let port = server.port, authorization = server.authorization
        let events = try await Blocking.run {
            let socket = try RawWebSocket(port: port, headers: authorization)
            try socket.send([.text(SecurityEndToEndTests.start(device: "raw-phone"))])
            socket.read(events: 1) // `session`
            try socket.send([RawFrame(opcode: RawFrame.closeOpcode, payload: [0x03])])
            return socket.readToEnd(replyingToClose: false)
        }
        #expect(Self.messageTypes(events).first == "session")
        Self.expectCloseLast(events, code: 1002)
    }

    /// The session's own fatal close (an unknown provider): its error, its close, and nothing after.
    @Test func theSessionsOwnCloseIsTheLastThingSent() async throws {
        let server = try TestServer()
        let start = #"{"type":"start","provider":"no-such-provider","sample_rate":16000,"encoding":"pcm_s16le","device_id":"raw-phone"}"#
        // Words sent after the start would make a server that ignored its own close answer them.
        let words = RawFrame.text(#"{"type":"words","result_id":"r1","final":true,"words":[{"text":"hi","start":0.1,"end":0.4}]}"#)
        let events = try await Self.exchange(server, start: start, then: [words, words])
        #expect(Self.messageTypes(events) == ["error"], "\(events)")
        Self.expectCloseLast(events, code: nil)
    }
}
