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
}
