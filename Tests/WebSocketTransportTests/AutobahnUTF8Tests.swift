import Testing
import TestSupport
@testable import WebSocketTransport

/// Autobahn's cases 6: text messages must be UTF-8. Valid ones are echoed, however they are split
/// into frames; an invalid one fails the connection with 1007, as soon as the offending byte arrives
/// (before the message ends).
@Suite("RFC 6455 UTF-8 in text messages (Autobahn 6)")
struct AutobahnUTF8Tests {
    typealias Case = AutobahnCase
    static let invalidPayload: Set<UInt16?> = [1007]

    /// "κόσμε", and the same cut by a UTF-16 surrogate (ED A0 80), and by U+110000 (F4 90 80 80).
    static let kosme: [UInt8] = [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5]
    static let edited: [UInt8] = Array("edited".utf8)
    static let surrogate: [UInt8] = [0xED, 0xA0, 0x80]
    static let beyondUnicode: [UInt8] = [0xF4, 0x90, 0x80, 0x80]

    static func oneOctetFrames(_ bytes: [UInt8]) -> [RawFrame] {
        bytes.enumerated().map { index, byte in
            RawFrame(opcode: index == 0 ? RawFrame.textOpcode : RawFrame.continuationOpcode, payload: [byte], fin: index == bytes.count - 1)
        }
    }

    static func echoed(_ id: String, _ frames: [RawFrame], _ text: String) -> Case {
        Case.ok(id, [.send(frames)], [.text(text)])
    }

    static let messages: [Case] = {
        let valid = "Hello-µ@ßöäüàá-UTF-8!!"
        let validBytes = Array(valid.utf8)
        let split = validBytes.count / 2 // "µ@ß…" : check the cut is on a code point boundary below
        let kosmeText = String(decoding: kosme, as: UTF8.self)
        let invalid = kosme + surrogate + edited
        return [
            echoed("6.1.1", [.text("")], ""),
            echoed("6.1.2", [.text("", fin: false), .continuation("", fin: false), .continuation("")], ""),
            echoed("6.1.3", [.text("", fin: false), .continuation("middle frame payload", fin: false), .continuation("")], "middle frame payload"),
            echoed("6.2.1", [.text(valid)], valid),
            echoed("6.2.2", [.text(bytes: Array(validBytes[..<boundary(validBytes, near: split)]), fin: false),
                             .continuation(Array(validBytes[boundary(validBytes, near: split)...]))], valid),
            echoed("6.2.3", oneOctetFrames(validBytes), valid),
            echoed("6.2.4", oneOctetFrames(kosme), kosmeText),
            Case("6.3.1", [.send([.text(bytes: invalid)])], close: invalidPayload),
            Case("6.3.2", [.send(oneOctetFrames(invalid))], close: invalidPayload),
            // Fail fast: the third part is never sent, so only a check as the bytes arrive closes.
            Case("6.4.1", [.send([.text(bytes: kosme, fin: false)]), .pause(milliseconds: 200),
                           .send([.continuation(beyondUnicode, fin: false)])], close: invalidPayload),
            Case("6.4.2", [.send([.text(bytes: kosme, fin: false)]), .pause(milliseconds: 200),
                           .send([.continuation(Array(beyondUnicode[..<2]), fin: false)])], close: invalidPayload),
            // The same within one frame, its bytes sent in chops.
            Case("6.4.3", chopped(kosme + beyondUnicode + edited, cuts: [kosme.count, kosme.count + 4]), close: invalidPayload),
            Case("6.4.4", chopped(kosme + beyondUnicode + edited, cuts: [kosme.count, kosme.count + 2]), close: invalidPayload),
        ]
    }()

    /// The first code point boundary at or after `index`.
    static func boundary(_ bytes: [UInt8], near index: Int) -> Int {
        var index = index
        while index < bytes.count, bytes[index] & 0xC0 == 0x80 { index += 1 }
        return index
    }

    /// One text frame carrying `payload`, its wire bytes cut after the payload offsets in `cuts`; the
    /// last piece is never sent.
    static func chopped(_ payload: [UInt8], cuts: [Int]) -> [Case.Step] {
        let wire = RawFrame.text(bytes: payload).encoded()
        let header = wire.count - payload.count
        let first = Array(wire[..<(header + cuts[0])]), second = Array(wire[(header + cuts[0])..<(header + cuts[1])])
        return [.sendBytes(first), .pause(milliseconds: 200), .sendBytes(second)]
    }

    @Test(arguments: messages) func echoesValidAndFailsInvalidText(_ testCase: Case) async throws {
        try await testCase.check()
    }

    /// Cases 6.5–6.23 take their sequences from Markus Kuhn's UTF-8 decoder test; these are a
    /// selection from each of its groups.
    static let sequences: [(valid: Bool, bytes: [UInt8])] = [
        (true, Array("hello$world".utf8)), (true, Array("hello¢world".utf8)), (true, Array("hello€world".utf8)),
        (true, Array("hello\u{24B62}world".utf8)),
        (true, [0x00]), (true, [0xC2, 0x80]), (true, [0xE0, 0xA0, 0x80]), (true, [0xF0, 0x90, 0x80, 0x80]),          // first of each length
        (true, [0x7F]), (true, [0xDF, 0xBF]), (true, [0xEF, 0xBF, 0xBF]), (true, [0xF4, 0x8F, 0xBF, 0xBF]),          // last of each length
        (true, [0xED, 0x9F, 0xBF]), (true, [0xEE, 0x80, 0x80]), (true, [0xEF, 0xBF, 0xBD]),                          // around the surrogates
        (true, [0xEF, 0xBF, 0xBE]), (true, [0xF0, 0x9F, 0xBF, 0xBF]), (true, [0xF4, 0x8F, 0xBF, 0xBE]),              // noncharacters are valid
        (false, [0xF8, 0x88, 0x80, 0x80, 0x80]), (false, [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80]),                      // 5 and 6 bytes
        (false, [0xF4, 0x90, 0x80, 0x80]), (false, [0xF7, 0xBF, 0xBF, 0xBF]),                                          // beyond U+10FFFF
        (false, [0x80]), (false, [0xBF]), (false, [0x80, 0xBF, 0x80]),                                                 // stray continuations
        (false, [0xC0, 0x20, 0xC1, 0x20]), (false, [0xE0, 0x20]), (false, [0xF0, 0x20]),                               // lonely starts
        (false, [0xC0]), (false, [0xE0, 0x80]), (false, [0xF0, 0x80, 0x80]), (false, [0xDF]), (false, [0xEF, 0xBF]),   // missing last byte
        (false, [0xFE]), (false, [0xFF]), (false, [0xFE, 0xFE, 0xFF, 0xFF]),                                           // impossible bytes
        (false, [0xC0, 0xAF]), (false, [0xE0, 0x80, 0xAF]), (false, [0xF0, 0x80, 0x80, 0xAF]),                         // overlong "/"
        (false, [0xC1, 0xBF]), (false, [0xE0, 0x9F, 0xBF]), (false, [0xF0, 0x8F, 0xBF, 0xBF]),                         // maximum overlong
        (false, [0xC0, 0x80]), (false, [0xE0, 0x80, 0x80]),                                                            // overlong NUL
        (false, [0xED, 0xA0, 0x80]), (false, [0xED, 0xAD, 0xBF]), (false, [0xED, 0xBF, 0xBF]),                         // lone surrogates
        (false, [0xED, 0xA0, 0x80, 0xED, 0xB0, 0x80]), (false, [0xED, 0xAF, 0xBF, 0xED, 0xBF, 0xBF]),                   // paired surrogates
    ]

    static let kuhn: [Case] = sequences.enumerated().map { index, sequence in
        let id = "6.x.\(index + 1)"
        guard sequence.valid else { return Case(id, [.send([.text(bytes: sequence.bytes)])], close: invalidPayload) }
        return echoed(id, [.text(bytes: sequence.bytes)], String(decoding: sequence.bytes, as: UTF8.self))
    }

    @Test(arguments: kuhn) func judgesKuhnsSequences(_ testCase: Case) async throws {
        try await testCase.check()
    }
}
