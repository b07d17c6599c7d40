import Testing

@testable import SessionProtocol

@Suite struct JSONParserTests {
    let parser = JSONParser()

    @Test func parsesEveryValueKind() throws {
        let value = try parser.parse(#" {"a":[1,-2.5e2,0.125,true,false,null,"x\"\\\/\b\f\n\r\t\u0041\ud83d\ude00"],"b":{}} "#)
        #expect(
            value
                == .object([
                    "a": .array([
                        .number(1), .number(-250), .number(0.125), .bool(true), .bool(false), .null,
                        .string("x\"\\/\u{08}\u{0C}\n\r\tA😀"),
                    ]),
                    "b": .object([:]),
                ]))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "+1", "1e", "NaN", "Infinity", "-Infinity",
        "tru", "nul", "\"abc", "\"\\x\"", "\"\\ud83d\"", "\"\\ude00\"", "\"a\u{01}b\"", "[1 2]", "{\"a\" 1}",
        "{1:2}", "1e309", "-1e309", "[] []", "// c\n{}",
    ])
    func rejectsInvalidJSON(text: String) {
        #expect(throws: JSONParser.Failure.self) { try parser.parse(text) }
    }

    @Test func limitsNesting() throws {
        let shallow = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try parser.parse(shallow) }
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParser.Failure.self) { try parser.parse(deep) }
    }

    /// Text PostgreSQL cannot store is its own kind of failure, with the path of the value.
    @Test(arguments: [
        (#"{"words":[{"text":"ok"},{"text":"he\u0000llo"}]}"#, "words[1].text", "U+0000"),
        (#"{"a":{"b":"x\ud800"}}"#, "a.b", "lone surrogate"),
        (#"{"a":"\udc00"}"#, "a", "lone surrogate"),
        (#"{"a":"\ud800\u0041"}"#, "a", "lone surrogate"),
        (#"["\u0000"]"#, "[0]", "U+0000"),
    ])
    func refusesTextThatCannotBeStored(text: String, path: String, reason: String) {
        do {
            _ = try parser.parse(text)
            Issue.record("parsed \(text)")
        } catch {
            #expect(error.kind == .invalidText)
            #expect(error.path == path)
            #expect(error.reason.contains(reason))
        }
    }

    @Test func refusesBytesThatAreNotUTF8WithTheirPath() {
        var bytes = Array(#"{"device_id":"ab"#.utf8)
        bytes += [0xC3, 0x28]  // an invalid two-byte sequence
        bytes += Array(#""}"#.utf8)
        do {
            _ = try parser.parse(bytes: bytes)
            Issue.record("parsed invalid UTF-8")
        } catch {
            #expect(error.kind == .invalidText)
            #expect(error.path == "device_id")
            #expect(error.reason.contains("UTF-8"))
        }
    }

    @Test func replacePolicyReadsTheRestOfTheMessage() throws {
        let lenient = JSONParser(invalidText: .replace)
        let value = try lenient.parse(#"{"type":"words","text":"a\u0000b","x":"\ud800"}"#)
        #expect(value == .object(["type": .string("words"), "text": .string("a\u{FFFD}b"), "x": .string("\u{FFFD}")]))
    }

    @Test func syntaxErrorsAreNotInvalidText() {
        do {
            _ = try parser.parse(#"{"a":"\x"}"#)
        } catch {
            #expect(error.kind == .syntax)
        }
    }
}
