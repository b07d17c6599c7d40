import Testing
import TestSupport
@testable import WebSocketTransport

/// Autobahn's cases 7 (the closing handshake: what may follow a close, payload lengths, close codes,
/// the reason's UTF-8) and, beyond Autobahn, client frames without a mask (RFC 6455 §5.1).
@Suite("RFC 6455 closing handshake and unmasked frames (Autobahn 7)")
struct AutobahnCloseTests {
    typealias Case = AutobahnCase
    static let normal: Set<UInt16?> = [1000]
    static let protocolError: Set<UInt16?> = [1002]

    static let closing: [Case] = {
        let hello = "Hello World!"
        let big = String(decoding: Case.filler(256 * 1024), as: UTF8.self)
        return [
            // A message, then a close: the echo was awaited (lws answers a close before it writes
            // anything queued, so an echo still queued when the close arrives is dropped, never sent after).
            Case("7.1.1", [.send([.text(hello)]), .awaitEvents(1), .send([Case.closeNormally])], before: [.text(hello)], close: normal),
            // Whatever follows the client's close is ignored: a second close, a ping, a message, a fragment.
            Case("7.1.2", [.send([Case.closeNormally, .close()])], close: normal),
            Case("7.1.3", [.send([Case.closeNormally, .ping()])], close: normal),
            Case("7.1.4", [.send([Case.closeNormally, .text(hello)])], close: normal),
            Case("7.1.5", [.send([.text("fragment1", fin: false), Case.closeNormally, .continuation("fragment2")])], close: normal),
            // Informational in Autobahn: the messages may or may not be echoed before the close echo.
            Case("7.1.6", [.send([.text(big), .text(hello), Case.closeNormally, .ping()])],
                 before: [.text(big), .text(hello)], orBefore: [[], [.text(big)]], close: normal),
            // Payload lengths: none, 1 byte (a code takes 2), a code, a code and reason, the longest
            // reason (123), one byte too long (a 126-byte control frame, which lws only drops TCP for).
            Case("7.3.1", [.send([.close()])], close: [nil, 1000]),
            Case("7.3.2", [.send([RawFrame(opcode: 8, payload: Array("a".utf8))])], close: protocolError),
            Case("7.3.3", [.send([.close(1000)])], close: normal),
            Case("7.3.4", [.send([.close(1000, reason: Array(hello.utf8))])], close: normal),
            Case("7.3.5", [.send([.close(1000, reason: Case.filler(123))])], close: normal),
            Case("7.3.6", [.send([.close(1000, reason: Case.filler(124))])], close: protocolError),
            // A reason that is not UTF-8: 1002 or 1007 (lws drops TCP for it; the server sends 1002).
            Case("7.5.1", [.send([.close(1000, reason: AutobahnUTF8Tests.kosme + AutobahnUTF8Tests.surrogate + AutobahnUTF8Tests.edited)])],
                 close: [1002, 1007]),
        ]
    }()

    @Test(arguments: closing) func closesCleanlyAndFailsMalformedCloses(_ testCase: Case) async throws {
        try await testCase.check()
    }

    /// 7.7.x: valid codes are echoed (or answered with 1000).
    static let validCodes: [Case] = [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999]
        .enumerated().map { index, code in Case("7.7.\(index + 1) (\(code))", [.send([.close(UInt16(code))])], close: [UInt16(code), 1000]) }

    /// 7.9.x: codes RFC 6455 reserves or leaves unassigned get 1002; 7.13.1/7.13.2 (5000, 65535)
    /// are "undefined by the spec" in Autobahn, and unassigned: 1002 as well. lws answers the codes
    /// below 3000 itself; the server answers 5000 and above.
    static let invalidCodes: [Case] = [0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999].enumerated()
        .map { index, code in Case("7.9.\(index + 1) (\(code))", [.send([.close(UInt16(code))])], close: [1002]) }
        + [Case("7.13.1 (5000)", [.send([.close(5000)])], close: [1002]), Case("7.13.2 (65535)", [.send([.close(65535)])], close: [1002]),
           Case("1015", [.send([.close(1015)])], close: [1002])]

    @Test(arguments: validCodes + invalidCodes) func echoesValidCloseCodesAndRefusesInvalidOnes(_ testCase: Case) async throws {
        try await testCase.check()
    }

    /// RFC 6455 §5.1: a server must fail the connection on a client frame without a mask. lws 4.1.6
    /// accepts them; the server reads the mask bit itself. (An unmasked ping is answered: lws handles
    /// pings without a callback, so the server never sees one. Any unmasked data, pong or close fails.)
    static let unmasked: [Case] = [
        Case("unmasked text", [.sendUnmasked([.text("hello")])], close: protocolError),
        Case("unmasked binary", [.sendUnmasked([.binary([1, 2, 3])])], close: protocolError),
        Case("unmasked empty text", [.sendUnmasked([.text("")])], close: protocolError),
        Case("unmasked continuation", [.send([.text("frag", fin: false)]), .sendUnmasked([.continuation("ment")])], close: protocolError),
        Case("unmasked pong", [.sendUnmasked([.pong(Array("p".utf8))])], close: protocolError),
        Case("unmasked close", [.sendUnmasked([.close(1000)])], close: protocolError),
        Case("masked, then unmasked", [.send([.text("first")]), .awaitEvents(1), .sendUnmasked([.text("second")])],
             before: [.text("first")], close: protocolError),
    ]

    @Test(arguments: unmasked) func failsUnmaskedClientFrames(_ testCase: Case) async throws {
        try await testCase.check()
    }
}
