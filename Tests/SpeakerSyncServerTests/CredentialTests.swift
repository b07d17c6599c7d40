import Foundation
import Testing
@testable import SpeakerSyncServer
import WebSocketTransport

/// Credential text, digests, the in-memory book and where clients put credentials: pure logic.
@Suite struct CredentialTests {
    @Test func generatedCredentialsHave256BitSecretsAndDistinctIDs() throws {
        var seen = Set<String>()
        for _ in 0..<200 {
            let token = try Credential.generate(.deviceToken)
            let parts = token.text.split(separator: "_")
            #expect(parts.count == 3 && parts[0] == "sst")
            #expect(parts[1].count == 16 && parts[2].count == 64) // 64-bit id, 256-bit secret, hex
            #expect(Credential.parse(token.text).map { $0.id } == token.id)
            seen.insert(String(parts[2]))
        }
        #expect(seen.count == 200)
        let admin = try Credential.generate(.adminKey)
        #expect(admin.text.hasPrefix("ssa_") && Credential.parse(admin.text)?.kind == .adminKey)
    }

    @Test func digestsAreSHA256HexAndComparedByValue() {
        // SHA-256("abc") from FIPS 180-2.
        #expect(Credential.digest(of: "abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Credential.digestsMatch(Credential.digest(of: "x"), Credential.digest(of: "x")))
        #expect(!Credential.digestsMatch(Credential.digest(of: "x"), Credential.digest(of: "y")))
        #expect(!Credential.digestsMatch("", ""))
        #expect(!Credential.digestsMatch("ab", "abc"))
    }

    @Test func malformedTextIsNotACredential() {
        for text in ["", "sst_", "sst_abc_def", "xyz_0123456789abcdef_" + String(repeating: "0", count: 64),
                     "sst_0123456789abcdeg_" + String(repeating: "0", count: 64), "Bearer sst_x"] {
            #expect(Credential.parse(text) == nil, "\(text)")
        }
        #expect(Credential.redacted("sst_0123456789abcdef_" + String(repeating: "a", count: 64)) == "sst_0123456789abcdef_…")
        #expect(Credential.redacted("hunter2") == "[redacted]")
    }

    @Test func theBookFindsCredentialsByIDAndForgetsRevokedOnes() throws {
        let book = CredentialBook(environmentAdminKey: "environment-admin-key-0123456789abcdef")
        let token = try Credential.generate(.deviceToken)
        let other = try Credential.generate(.deviceToken)
        book.replace(with: [
            .init(id: token.id, kind: .deviceToken, deviceID: "phone-1", digest: token.digest),
            .init(id: other.id, kind: .deviceToken, deviceID: "phone-2", digest: other.digest),
        ])
        #expect(try book.authenticate(token.text).get() == .device(deviceID: "phone-1", tokenID: token.id))
        #expect(try book.authenticate("environment-admin-key-0123456789abcdef").get() == .admin(keyID: "env"))
        // Right id, wrong secret; a token presented as an admin key; nothing at all.
        let forged = "sst_\(token.id)_" + String(repeating: "0", count: 64)
        #expect(book.authenticate(forged) == .failure(.unknown))
        #expect(book.authenticate(token.text.replacingOccurrences(of: "sst_", with: "ssa_")) == .failure(.unknown))
        #expect(book.authenticate(nil) == .failure(.missing))
        #expect(book.authenticate("not-a-credential") == .failure(.malformed))
        // A fresh read without `other` reports its principal as gone, and it stops working.
        let gone = book.replace(with: [.init(id: token.id, kind: .deviceToken, deviceID: "phone-1", digest: token.digest)])
        #expect(gone == [.device(deviceID: "phone-2", tokenID: other.id)])
        #expect(book.authenticate(other.text) == .failure(.unknown))
        #expect(book.remove(id: token.id) == .device(deviceID: "phone-1", tokenID: token.id))
        #expect(book.authenticate(token.text) == .failure(.unknown))
    }

    @Test func credentialsArePresentedAsBearerSubprotocolOrQuery() throws {
        #expect(try PresentedCredential.bearer(["authorization": "Bearer abc"]) == "abc")
        #expect(try PresentedCredential.bearer(["authorization": "bearer   abc  "]) == "abc")
        // Deepgram's SDKs name the same thing `Token` (docs/deepgram.md).
        #expect(try PresentedCredential.bearer(["authorization": "Token abc"]) == "abc")
        #expect(throws: PresentedCredential.Failure.unsupportedScheme) { try PresentedCredential.bearer(["authorization": "Tokenabc"]) }
        #expect(try PresentedCredential.bearer([:]) == nil)
        #expect(throws: PresentedCredential.Failure.unsupportedScheme) { try PresentedCredential.bearer(["authorization": "Basic YTpi"]) }
        #expect(try PresentedCredential.upgrade(headers: ["sec-websocket-protocol": "token, sst_x"], query: [:]) == "sst_x")
        #expect(try PresentedCredential.upgrade(headers: ["sec-websocket-protocol": "speakersync"], query: ["token": "q"]) == "q")
        #expect(try PresentedCredential.upgrade(headers: ["authorization": "Bearer h"], query: ["token": "q"]) == "h")
        #expect(try PresentedCredential.upgrade(headers: [:], query: [:]) == nil)
    }

    @Test func redactionKeepsTokensOutOfLoggedPathsAndSessionQueries() {
        #expect(Redaction.path("/v1/listen?device_id=a&token=sst_secret") == "/v1/listen?device_id=a&token=[redacted]")
        #expect(Redaction.path("/v1/conversations") == "/v1/conversations")
        #expect(Redaction.query(["token": "sst_secret", "provider": "device"]) == ["provider": "device"])
        #expect(Redaction.options(#"{"max_speakers":3}"#) == #"{"max_speakers":3}"#)
        let scrubbed = Redaction.options(#"{"access_key":"pv-123","nested":{"apiToken":"t"},"num_speakers":2}"#)
        #expect(!scrubbed.contains("pv-123") && !scrubbed.contains(#""t""#) && scrubbed.contains(#""num_speakers":2"#))
    }
}

@Suite struct RateLimiterTests {
    @Test func aBucketAllowsTheBurstThenTheRateAndSaysWhenToRetry() {
        let limiter = RateLimiter(ratePerSecond: 2, burst: 3)
        for _ in 0..<3 { #expect(limiter.take("a", nowSeconds: 100) == nil) }
        let wait = limiter.take("a", nowSeconds: 100)
        #expect(wait != nil && abs(wait! - 0.5) < 1e-9)
        #expect(limiter.take("b", nowSeconds: 100) == nil) // per key
        #expect(limiter.take("a", nowSeconds: 100.5) == nil) // refilled one token
        #expect(limiter.take("a", nowSeconds: 100.5) != nil)
        #expect(limiter.take("a", nowSeconds: 200) == nil) // refills up to the burst only
        #expect(limiter.take("a", nowSeconds: 200) == nil)
        #expect(limiter.take("a", nowSeconds: 200) == nil)
        #expect(limiter.take("a", nowSeconds: 200) != nil)
    }

    @Test func rateZeroMeansNoLimit() {
        let limiter = RateLimiter(ratePerSecond: 0, burst: 1)
        for _ in 0..<1000 { #expect(limiter.take("a", nowSeconds: 0) == nil) }
    }
}

@Suite struct AccessGateTests {
    static func gate(_ adjust: (inout AccessConfig) -> Void = { _ in }) throws -> (AccessGate, Credential) {
        var config = AccessConfig(environmentAdminKey: nil)
        adjust(&config)
        let book = CredentialBook()
        let token = try Credential.generate(.deviceToken)
        book.add(.init(id: token.id, kind: .deviceToken, deviceID: "phone-1", digest: token.digest))
        return (AccessGate(config: config, book: book, clock: { 0 }), token)
    }

    /// Which paths it is asked about is the route table's (`RouteTableTests.openPathsAreTheProbesAndTheConsole`).
    @Test func everyRequestItIsAskedAboutNeedsACredential() throws {
        let (gate, token) = try Self.gate()
        #expect(gate.admit(HTTPRequest(method: "GET", path: "/v1/conversations"))?.status == 401)
        #expect(gate.admit(HTTPRequest(method: "GET", path: "/v1/conversations", headers: ["authorization": "Bearer nope"]))?.status == 401)
        #expect(gate.admit(HTTPRequest(method: "GET", path: "/v1/conversations", headers: ["authorization": "Basic eDp5"]))?.status == 401)
        #expect(gate.admit(HTTPRequest(method: "GET", path: "/v1/conversations", headers: ["authorization": "Bearer \(token.text)"])) == nil)
        let refused = try #require(gate.admit(HTTPRequest(method: "GET", path: "/v1/people")))
        #expect(refused.headers.contains { $0.0 == "www-authenticate" })
        #expect(String(decoding: refused.body, as: UTF8.self).contains(#""code":"unauthorized""#))
    }

    @Test func overTheRateAnswers429WithRetryAfter() throws {
        let (gate, token) = try Self.gate { $0.requestsPerSecond = 1; $0.requestBurst = 2 }
        let request = HTTPRequest(method: "GET", path: "/v1/conversations", headers: ["authorization": "Bearer \(token.text)"])
        #expect(gate.admit(request) == nil)
        #expect(gate.admit(request) == nil)
        let limited = try #require(gate.admit(request))
        #expect(limited.status == 429)
        #expect(limited.headers.contains { $0.0 == "retry-after" && $0.1 == "1" })
    }

    @Test func aDeviceMayHoldOnlySoManyConnectionsAndSessions() throws {
        let (gate, token) = try Self.gate { $0.maxConnectionsPerDevice = 1; $0.maxSessionsPerDevice = 1 }
        let upgrade = UpgradeRequest(path: "/v1/listen", query: [:], remoteAddress: nil, headers: ["authorization": "Bearer \(token.text)"])
        #expect(gate.admit(upgrade: upgrade) == .accept)
        let principal = try gate.principal(upgrade: upgrade).get()
        gate.connectionOpened(principal)
        guard case .refuse(429, "too_many_connections", _, let retryAfter) = gate.admit(upgrade: upgrade) else {
            Issue.record("second connection admitted"); return
        }
        #expect((retryAfter ?? 0) >= 1)
        gate.connectionClosed(principal)
        #expect(gate.admit(upgrade: upgrade) == .accept)
        #expect(gate.sessionStarting(deviceID: "phone-1"))
        #expect(!gate.sessionStarting(deviceID: "phone-1"))
        #expect(gate.sessionStarting(deviceID: "phone-2"))
        gate.sessionEnded(deviceID: "phone-1")
        #expect(gate.sessionStarting(deviceID: "phone-1"))
    }

    @Test func withAccessControlOffEveryoneIsAdmin() throws {
        let (gate, _) = try Self.gate { $0.mode = .off }
        #expect(gate.admit(HTTPRequest(method: "GET", path: "/v1/conversations")) == nil)
        #expect(try gate.principal(httpHeaders: [:]).get().isAdmin)
        #expect(AccessConfig.isLoopback("127.0.0.1") && AccessConfig.isLoopback("::1") && !AccessConfig.isLoopback("0.0.0.0"))
        #expect(AccessConfig.isLoopback("localhost") && AccessConfig.isLoopback("127.5.6.7") && AccessConfig.isLoopback("::ffff:127.0.0.1"))
        // A name that only looks like a loopback address, and addresses that are not.
        for host in ["127.0.0.1.evil.com", "127.evil", "::", "::ffff:10.0.0.1", "10.0.0.1", "", "no-such-host.invalid"] {
            #expect(!AccessConfig.isLoopback(host), "\(host)")
        }
    }

    @Test func deviceTokensAreScopedToTheirDevice() throws {
        let device = Principal.device(deviceID: "phone-1", tokenID: "t")
        #expect(try APIHandler.scopedDevice(device, requested: nil) == "phone-1")
        #expect(try APIHandler.scopedDevice(device, requested: "phone-1") == "phone-1")
        #expect(throws: APIError.self) { try APIHandler.scopedDevice(device, requested: "phone-2") }
        #expect(try APIHandler.scopedDevice(.admin(keyID: "k"), requested: nil) == nil)
        #expect(try APIHandler.scopedDevice(.admin(keyID: "k"), requested: "phone-2") == "phone-2")
    }
}
