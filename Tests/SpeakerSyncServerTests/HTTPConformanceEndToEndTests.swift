import Foundation
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// What schemathesis found against a live server (scripts/api-conformance), kept as tests on a real one.
@Suite(.serialized) struct HTTPConformanceEndToEndTests {
    typealias TestServer = EndToEndTests.TestServer

    @Test func aWrongMethodIs405WithAllow() throws {
        let server = try TestServer()
        let response = try server.request("POST", "/v1/conversations/x")
        #expect(response.status == 405)
        #expect(response.headers["allow"] == "GET, DELETE, HEAD")
        let tokens = try server.request("PUT", "/v1/devices/d/tokens")
        #expect(tokens.headers["allow"] == "GET, POST, HEAD")
    }

    /// A cursor whose timestamp part PostgreSQL cannot read (base64 of "garbage|x") is the client's
    /// mistake: 400, not 503 "database unavailable".
    @Test func aForgedCursorIs400() throws {
        let server = try TestServer()
        let response = try server.request("GET", "/v1/conversations?cursor=\(Data("garbage|x".utf8).base64EncodedString())")
        #expect(response.status == 400)
        #expect(((response.json() as? [String: Any])?["error"] as? [String: Any])?["code"] as? String == "invalid_parameter")
    }
}
