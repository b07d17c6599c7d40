import Testing
import TestSupport
@testable import WebSocketTransport

/// Autobahn's cases 1 (framing), 2 (pings and pongs), 3 (reserved bits) and 4 (reserved opcodes),
/// against the real `WebSocketServer` with an echo handler.
@Suite("RFC 6455 framing, pings, reserved bits and opcodes (Autobahn 1–4)")
struct AutobahnFramingTests {
    typealias Case = AutobahnCase
    static let normal: Set<UInt16?> = [1000]
    static let protocolError: Set<UInt16?> = [1002]

    // MARK: 1. Framing: text and binary echoes of every length class

    static let echoes: [Case] = {
        var cases: [Case] = []
        for (index, length) in [0, 125, 126, 127, 128, 65535, 65536].enumerated() {
            let text = String(decoding: Case.filler(length), as: UTF8.self)
            cases.append(Case.ok("1.1.\(index + 1)", [.send([.text(text)])], [.text(text)]))
            let bytes = Case.filler(length, byte: 0xFE)
            cases.append(Case.ok("1.2.\(index + 1)", [.send([.binary(bytes)])], [.binary(bytes)]))
        }
        // 1.1.8 and 1.2.8: 65536 bytes sent in chops of 997 octets.
        let text = String(decoding: Case.filler(65536), as: UTF8.self)
        cases.append(Case.ok("1.1.8", chops(RawFrame.text(text).encoded(), 997), [.text(text)]))
        let bytes = Case.filler(65536, byte: 0xFE)
        cases.append(Case.ok("1.2.8", chops(RawFrame.binary(bytes).encoded(), 997), [.binary(bytes)]))
        return cases
    }()

    static func chops(_ bytes: [UInt8], _ size: Int) -> [Case.Step] {
        stride(from: 0, to: bytes.count, by: size).map { .sendBytes(Array(bytes[$0..<min(bytes.count, $0 + size)])) }
    }

    @Test(arguments: echoes) func echoesTextAndBinaryOfEveryLength(_ testCase: Case) async throws {
        try await testCase.check()
    }

    // MARK: 2. Pings and pongs

    static let pings: [Case] = {
        let hello = Array("Hello, world!".utf8)
        let binary: [UInt8] = [0x00, 0xFF, 0xFE, 0xFD, 0xFC, 0xFB, 0x00, 0xFF]
        let max = Case.filler(125, byte: 0xFE)
        let payloads = (0..<10).map { Array("payload-\($0)".utf8) }
        return [
            Case.ok("2.1", [.send([.ping()])], [.pong([])]),
            Case.ok("2.2", [.send([.ping(hello)])], [.pong(hello)]),
            Case.ok("2.3", [.send([.ping(binary)])], [.pong(binary)]),
            Case.ok("2.4", [.send([.ping(max)])], [.pong(max)]),
            // A control frame may carry at most 125 bytes: lws only drops TCP for this; the server sends 1002.
            Case("2.5", [.send([.ping(Case.filler(126, byte: 0xFE))])], close: protocolError),
            Case.ok("2.6", [.sendOctetwise([.ping(max)])], [.pong(max)]),
            Case("2.7", [.send([.pong(), Case.closeNormally])], close: normal),
            Case("2.8", [.send([.pong(Array("unsolicited pong payload".utf8)), Case.closeNormally])], close: normal),
            Case.ok("2.9", [.send([.pong(Array("unsolicited pong payload".utf8)), .ping(Array("ping payload".utf8))])],
                    [.pong(Array("ping payload".utf8))]),
            // 2.10/2.11 send ten pings back to back and check every pong, which RFC 6455 does not require
            // (§5.5.3: an endpoint may answer only the latest); lws keeps one pending ping and drops the
            // others. Here each ping waits for its pong, which every endpoint must send.
            Case.ok("2.10", payloads.enumerated().flatMap { index, payload in [.send([.ping(payload)]), .awaitEvents(index + 1)] },
                    payloads.map { .pong($0) }),
            Case.ok("2.11", payloads.enumerated().flatMap { index, payload in [.sendOctetwise([.ping(payload)]), .awaitEvents(index + 1)] },
                    payloads.map { .pong($0) }),
        ]
    }()

    @Test(arguments: pings) func answersPingsAndIgnoresPongs(_ testCase: Case) async throws {
        try await testCase.check()
    }

    // MARK: 3. Reserved bits (no extension is negotiated, so all must be 0)

    static let reservedBits: [Case] = {
        let hello = "Hello, world!"
        func then(_ rsv: UInt8, _ send: ([RawFrame]) -> Case.Step) -> [Case.Step] {
            // The first message's echo is awaited: a server may fail the connection before writing an
            // echo it had queued when both frames arrive together.
            [.send([.text(hello)]), .awaitEvents(1), send([RawFrame(opcode: 1, payload: Array(hello.utf8), rsv: rsv), .ping()])]
        }
        return [
            Case("3.1", [.send([RawFrame(opcode: 1, payload: Array(hello.utf8), rsv: 1)])], close: protocolError),
            Case("3.2", then(2) { .send($0) }, before: [.text(hello)], close: protocolError),
            Case("3.3", then(3) { .sendFramewise($0) }, before: [.text(hello)], close: protocolError),
            Case("3.4", then(4) { .sendOctetwise($0) }, before: [.text(hello)], close: protocolError),
            Case("3.5", [.send([RawFrame(opcode: 2, payload: [0, 1, 2, 3], rsv: 5)])], close: protocolError),
            Case("3.6", [.send([RawFrame(opcode: 9, payload: Array(hello.utf8), rsv: 6)])], close: protocolError),
            Case("3.7", [.send([RawFrame(opcode: 8, payload: [0x03, 0xE8], rsv: 7)])], close: protocolError),
        ]
    }()

    @Test(arguments: reservedBits) func failsFramesWithReservedBits(_ testCase: Case) async throws {
        try await testCase.check()
    }

    // MARK: 4. Reserved opcodes

    static let reservedOpcodes: [Case] = {
        let hello = "Hello, world!"
        func reserved(_ id: String, _ opcode: UInt8, withPayload: Bool, afterEcho: Bool) -> Case {
            let frame = RawFrame(opcode: opcode, payload: withPayload ? Array("reserved opcode payload".utf8) : [])
            guard afterEcho else { return Case(id, [.send([frame])], close: protocolError) }
            return Case(id, [.send([.text(hello)]), .awaitEvents(1), .send([frame, .ping()])], before: [.text(hello)], close: protocolError)
        }
        var cases: [Case] = []
        for (index, opcode) in ([3, 4, 5, 6, 7] as [UInt8]).enumerated() {
            cases.append(reserved("4.1.\(index + 1)", opcode, withPayload: index % 2 == 1, afterEcho: index >= 2))
        }
        for (index, opcode) in ([11, 12, 13, 14, 15] as [UInt8]).enumerated() {
            cases.append(reserved("4.2.\(index + 1)", opcode, withPayload: index % 2 == 1 || index == 4, afterEcho: index >= 2))
        }
        return cases
    }()

    @Test(arguments: reservedOpcodes) func failsFramesWithReservedOpcodes(_ testCase: Case) async throws {
        try await testCase.check()
    }

    /// Not an Autobahn case: a 64-bit length with the most significant bit set (RFC 6455 §5.2).
    /// lws only drops TCP for it; the server must send 1002.
    @Test func failsAFrameWhose64BitLengthHasTheTopBitSet() async throws {
        var bytes = RawFrame.binary([1, 2, 3]).encoded(announcedLength: 1 << 63, forceLength64: true)
        bytes.removeLast(3) // the three payload bytes: the header already broke the rules
        try await Case("length-msb", [.sendBytes(bytes)], close: Self.protocolError).check()
    }
}
