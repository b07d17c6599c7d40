import DeterministicRandom
import Foundation
import Testing

@testable import SessionProtocol

/// The string fast path (one UTF-8 scan, then one append) must write exactly what the scalar-by-scalar
/// escaper writes, for every string and both escapings.
@Suite struct JSONTextWriterTests {
    /// Characters that need an escape in one escaping or the other, beside plain ASCII and other UTF-8
    /// (including 0xE2-led characters that are not U+2028/2029, which take the slow path too).
    static let alphabet: [String] = [
        "a", "Z", "0", " ", "é", "ß", "日", "😀", "\u{2013}", "\u{20AC}",
        "\"", "\\", "/", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{00}", "\u{1F}", "\u{7F}",
        "\u{2028}", "\u{2029}",
    ]

    static func randomString(_ random: inout SeededRandom) -> String {
        var string = ""
        for _ in 0 ..< random.integer(0 ... 12) {
            // Mostly plain text, as words are, so both paths are exercised often.
            string += random.chance(0.7) ? String(UnicodeScalar(UInt8(random.integer(0x20 ... 0x7E)))) : alphabet[random.index(alphabet.count)]
        }
        return string
    }

    @Test(arguments: [JSONTextWriter.Escaping.standard, .foundation])
    func theFastPathWritesWhatTheEscaperWrites(escaping: JSONTextWriter.Escaping) throws {
        var random = SeededRandom(seed: 4711)
        var fastPathTaken = 0
        for _ in 0 ..< 5_000 {
            let string = Self.randomString(&random)
            var fast: [UInt8] = []
            var reference: [UInt8] = []
            JSONTextWriter.appendQuoted(string, to: &fast, escaping: escaping)
            JSONTextWriter.appendQuotedEscaping(string, to: &reference, escaping: escaping)
            #expect(fast == reference, "\(string.debugDescription)")
            if !JSONTextWriter.needsEscaping(string, escaping: escaping) { fastPathTaken += 1 }
            // And it reads back as the same string (Foundation as the independent parser).
            let parsed = try JSONSerialization.jsonObject(with: Data("[\(String(decoding: fast, as: UTF8.self))]".utf8)) as? [String]
            #expect(parsed == [string])
        }
        // Both paths were exercised.
        #expect(fastPathTaken > 500 && fastPathTaken < 4_500)
    }

    @Test func onlyTheBytesThatNeedAnEscapeLeaveTheFastPath() {
        #expect(!JSONTextWriter.needsEscaping("Speaker 1: héllo 日本 😀", escaping: .standard))
        #expect(!JSONTextWriter.needsEscaping("a/b", escaping: .standard))
        #expect(JSONTextWriter.needsEscaping("a/b", escaping: .foundation))
        for special in ["\"", "\\", "\n", "\u{00}", "\u{1F}", "\u{2028}", "\u{2029}"] {
            #expect(JSONTextWriter.needsEscaping("x\(special)y", escaping: .standard))
            #expect(JSONTextWriter.needsEscaping("x\(special)y", escaping: .foundation))
        }
        var bytes: [UInt8] = []
        JSONTextWriter.appendQuoted("line\u{2028}two \"q\"", to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == #""line\u2028two \"q\"""#)
    }
}
