import Foundation
import Testing
@testable import WebSocketTransport

/// `RequestTarget`'s checks on what lws 4.1.6 stored of a request line, one by one.
@Suite struct RequestTargetTests {
    static let version = Array("HTTP/1.1".utf8)

    static func target(_ path: [String], query: [String]? = nil, version: [UInt8]? = RequestTargetTests.version,
                       stored: [UInt8]? = RequestTargetTests.version + [0]) -> RequestTarget {
        RequestTarget(pathFragments: path.map { Array($0.utf8) }, queryFragments: query?.map { Array($0.utf8) },
                      versionFragments: version.map { [$0] }, storedAtVersion: stored)
    }

    @Test func aCleanTargetPassesWithItsPathAndQueryAsLwsDecodedThem() {
        let target = Self.target(["/v1/conversations/a%41"], query: ["label=x", "", "b=2"])
        #expect(target.problem == nil)
        #expect(target.path == Array("/v1/conversations/a%41".utf8))
        #expect(target.queryPairs == [Array("label=x".utf8), [], Array("b=2".utf8)])
    }

    /// A CR or LF ends lws's request line: the version is never stored. That is the only trace it
    /// leaves, whether it was in the path or the query, raw or encoded.
    @Test func aLineWithoutVersionWasCutShort() {
        #expect(Self.target(["/v1/conversations/"], version: nil, stored: nil).problem == .controlCharacter)
        #expect(Self.target(["/v1/people"], query: ["device_id=a"], version: nil, stored: nil).problem == .controlCharacter)
        #expect(Self.target(["/x"], version: [], stored: [0]).problem == .controlCharacter)
    }

    /// A NUL lws kept inside a fragment shows in its bytes (`lws_hdr_copy_fragment` copies them all).
    @Test(arguments: [[0], [0x0A], [0x0D]] as [[UInt8]])
    func aControlByteInsideAFragmentIsRefused(byte: [UInt8]) {
        let inPath = RequestTarget(pathFragments: [Array("/a/".utf8) + byte + Array("x".utf8)], queryFragments: nil,
                                   versionFragments: [Self.version], storedAtVersion: Self.version + [0])
        let inQuery = RequestTarget(pathFragments: [Array("/a".utf8)], queryFragments: [Array("q=".utf8) + byte],
                                    versionFragments: [Self.version], storedAtVersion: Self.version + [0])
        #expect(inPath.problem == .controlCharacter)
        #expect(inQuery.problem == .controlCharacter)
    }

    /// A NUL ending the path (`/a/%00`) is stored but neither counted nor copied: only the version,
    /// one byte later than the counted lengths put it, tells.
    @Test func aNULLwsDidNotCountShiftsTheVersion() {
        let shifted = [0] + Self.version
        #expect(Self.target(["/a/"], stored: shifted).problem == .controlCharacter)
        #expect(Self.target(["/a/"], query: ["x=1"], stored: shifted).problem == .controlCharacter)
        #expect(Self.target(["/a/"], stored: nil).problem == .controlCharacter)
    }

    @Test func versionOffsetFollowsLwsLayout() {
        // "/echo\0HTTP/1.1": the version right after the path's NUL.
        #expect(RequestTarget.versionOffset(pathFragments: [Array("/echo".utf8)], queryFragments: nil) == 6)
        // "/echo\0?x=1\0HTTP/1.1": one byte skipped after the `?`'s NUL.
        #expect(RequestTarget.versionOffset(pathFragments: [Array("/echo".utf8)], queryFragments: [Array("x=1".utf8)]) == 11)
        // "/e\0;f\0?x=1\0\0?\0HTTP…": likewise after each `;` or `&`, empty fragments included.
        #expect(RequestTarget.versionOffset(pathFragments: [Array("/e".utf8), Array("f".utf8)],
                                            queryFragments: [Array("x=1".utf8), []]) == 13)
    }

    @Test func aPathLwsSplitAtSemicolonOrAmpersandIsRefused() {
        let target = Self.target(["/v1/conversations/a", "b"])
        #expect(target.problem == .splitPath)
        #expect(target.refusalMessage?.contains("%3B") == true)
    }
}

/// Answers every request with its method, path and query as the transport handed them over.
private final class TargetEchoHandler: HTTPHandler {
    func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let query = request.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        respond(.text("\(request.method) \(request.path) ?\(query)"))
    }
}

/// The requests schemathesis found, sent byte for byte to a real server over a POSIX socket: a NUL,
/// CR or LF (raw or percent-encoded) in the path or the query is refused with 400 `invalid_text`
/// instead of being served cut short, except where lws itself drops the connection first.
@Suite("Request targets lws would cut short, over a raw socket")
struct RequestTargetEndToEndTests {
    private static func errorCode(_ response: RawHTTPResponse) -> String? {
        let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return (object?["error"] as? [String: Any])?["code"] as? String
    }

    private static func send(_ port: Int, _ target: [UInt8], upgrade: Bool = false) throws -> RawHTTPResponse {
        let headers = upgrade
            ? "Host: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
            : "Host: t\r\n\r\n"
        return try rawHTTP(port: port, request: Array("GET ".utf8) + target + Array(" HTTP/1.1\r\n\(headers)".utf8))
    }

    private static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Every spot lws lets a NUL, CR or LF through (in the path, in the query; encoded and raw) gets
    /// the 400, and the connection closes after it (the rest of the line was read as headers).
    @Test(arguments: [
        "/echo/%00", "/echo/%00x", "/echo/.%00", "/echo/%00?a=1", "/echo/..%00x",
        "/echo%0Dxyz", "/echo%0Ab/more", "/echo/a%0D", "/echo?a=x%0Dy&b=2", "/echo?a=x%0Ay", "/echo?%0A=1",
        "/echo/\u{0}x", "/echo\rX", "/echo\nX", "/echo?a=\rX", "/echo?a=\nX",
    ])
    func aControlCharacterInTheTargetIsRefused(target: String) throws {
        let (server, port) = try startServer(ScriptedHandler(), http: TargetEchoHandler())
        defer { server.shutdown() }
        let response = try Self.send(port, Self.bytes(target))
        #expect(response.status == 400, "\(target.debugDescription): \(response.text)")
        #expect(Self.errorCode(response) == "invalid_text", "\(target.debugDescription)")
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["connection"] == "close")
    }

    /// A NUL anywhere lws is not right after a `/` (any in the query) makes lws 4.1.6 fail the parse
    /// (`if (!c) return -1;` in `lws_parse_urldecode`) and close the socket before any callback: no
    /// answer can be given, but nothing is served either. Pinned so a newer lws shows up here.
    @Test(arguments: ["/ec%00ho", "/echo?a=1%00", "/echo?&%00=null", "/ec\u{0}ho"])
    func aNULWhereLwsFailsTheParseGetsNoAnswerAndIsNotServed(target: String) throws {
        let (server, port) = try startServer(ScriptedHandler(), http: TargetEchoHandler())
        defer { server.shutdown() }
        #expect(throws: RawHTTPError.self, "\(target.debugDescription)") { try Self.send(port, Self.bytes(target)) }
    }

    @Test(arguments: ["/echo;b", "/echo&b", "/v1/conversations/a;b?x=1"])
    func aLiteralSemicolonOrAmpersandInThePathIsRefusedNotRewrittenToAComma(target: String) throws {
        let (server, port) = try startServer(ScriptedHandler(), http: TargetEchoHandler())
        defer { server.shutdown() }
        let response = try Self.send(port, Self.bytes(target))
        #expect(response.status == 400 && Self.errorCode(response) == "invalid_text", "\(target): \(response.text)")
    }

    /// The path reaches the handler decoded once (`%25` is a `%`), `;` stays literal where lws keeps it,
    /// and an empty query piece no longer hides the pieces after it.
    @Test(arguments: [
        ("/v1/conversations/a%2541", "GET /v1/conversations/a%41 ?"),
        ("/v1/conversations/a%3Bb%26c", "GET /v1/conversations/a;b&c ?"),
        ("/v1/a/;b", "GET /v1/a/;b ?"),
        ("/echo?a=1&&b=2&c=%2541", "GET /echo ?a=1&b=2&c=%41"),
    ])
    func aCleanTargetIsHandedOverDecodedOnce(target: String, expected: String) throws {
        let (server, port) = try startServer(ScriptedHandler(), http: TargetEchoHandler())
        defer { server.shutdown() }
        let response = try Self.send(port, Self.bytes(target))
        #expect(response.status == 200)
        #expect(response.text == expected)
    }

    /// The upgrade gets the same 400 before its path is compared: what lws left of the target may be
    /// exactly the WebSocket path.
    @Test(arguments: ["/v1/listen?device_id=a%0Ab&provider=device", "/v1/listen%0D/x", "/v1/listen/%00",
                      "/v1/listen?device_id=a\rb", "/v1/listen;x"])
    func anUpgradeWithSuchATargetIsRefusedWith400(target: String) throws {
        let admitted = ScriptedHandler(onAdmit: { _ in .accept })
        let (server, port) = try startServer(admitted, http: TargetEchoHandler())
        defer { server.shutdown() }
        let response = try Self.send(port, Self.bytes(target), upgrade: true)
        #expect(response.status == 400, "\(target.debugDescription)")
        #expect(Self.errorCode(response) == "invalid_text")
        #expect(admitted.log.withLock { $0.opened.isEmpty })
    }
}
