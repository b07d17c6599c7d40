import Testing
@testable import WebSocketTransport

@Suite("Transport pure logic")
struct PureLogicTests {
    @Test func queryStringDecoding() {
        #expect(QueryString.parse("a=1&b=x%20y&c=%E2%9C%93&d&e=1+2&bad=%zz&a=2") ==
                ["a": "2", "b": "x y", "c": "✓", "d": "", "e": "1 2", "bad": "%zz"])
        #expect(QueryString.parse("") == [:])
    }

    @Test func webSocketURLParsing() throws {
        let full = try WebSocketURL("ws://127.0.0.1:8080/v1/listen?device_id=a")
        #expect(full == (try WebSocketURL("ws://127.0.0.1:8080/v1/listen?device_id=a")))
        #expect(full.host == "127.0.0.1")
        #expect(full.port == 8080)
        #expect(full.pathAndQuery == "/v1/listen?device_id=a")
        let bare = try WebSocketURL("ws://example.org")
        #expect(bare.port == 80)
        #expect(bare.pathAndQuery == "/")
        let v6 = try WebSocketURL("ws://[::1]:9/x")
        #expect(v6.host == "::1")
        #expect(v6.port == 9)
        #expect(throws: TransportError.self) { try WebSocketURL("ws://h:70000/") }
        #expect(!full.isSecure)
    }

    @Test func secureWebSocketURLParsing() throws {
        let bare = try WebSocketURL("wss://example.org")
        #expect(bare.isSecure)
        #expect(bare.port == 443)
        #expect(bare.defaultPort == 443)
        #expect(bare.pathAndQuery == "/")
        let full = try WebSocketURL("wss://127.0.0.1:8443/v1/listen?device_id=a")
        #expect(full.isSecure)
        #expect(full.host == "127.0.0.1")
        #expect(full.port == 8443)
        #expect(full.pathAndQuery == "/v1/listen?device_id=a")
        let v6 = try WebSocketURL("wss://[::1]?x=1")
        #expect(v6.host == "::1")
        #expect(v6.port == 443)
        #expect(v6.pathAndQuery == "/?x=1")
        #expect(try WebSocketURL("ws://example.org").defaultPort == 80)
        for bad in ["https://example.org/", "wss:/example.org", "WSS://example.org", "wss://", "wss://h:0/", "wss://h:x/"] {
            #expect(throws: TransportError.self, "\(bad)") { try WebSocketURL(bad) }
        }
    }

    @Test func assemblerJoinsPiecesAndEnforcesLimit() {
        var assembler = MessageAssembler(limit: 10)
        let hello = Array("hello".utf8)
        let events = hello.withUnsafeBytes { bytes in
            [assembler.append(bytes, isBinary: false, isFinal: false, remainingInFrame: 0),
             assembler.append(bytes, isBinary: false, isFinal: true, remainingInFrame: 0)]
        }
        #expect(events == [nil, .message(.text("hellohello"))])

        var limited = MessageAssembler(limit: 10)
        let eight = [UInt8](repeating: 1, count: 8)
        let limitedEvents = eight.withUnsafeBytes { bytes in
            [limited.append(bytes, isBinary: true, isFinal: false, remainingInFrame: 0),
             // 8 buffered + 8 now + 4 still announced in this frame: rejected, the rest is dropped
             limited.append(bytes, isBinary: true, isFinal: true, remainingInFrame: 4),
             limited.append(bytes, isBinary: true, isFinal: true, remainingInFrame: 0),
             // a new message after the dropped one is accepted again
             limited.append(bytes, isBinary: true, isFinal: true, remainingInFrame: 0)]
        }
        #expect(limitedEvents == [nil, .tooLarge(byteCount: 20, limit: 10), nil, .message(.binary(eight))])
    }

    @Test func outboxIsFIFOAndRefusesSendsAfterClose() {
        var outbox = Outbox()
        let accepted = [outbox.append(.text("a")), outbox.append(.binary([1, 2, 3])),
                        outbox.appendClose(code: 4001, reason: "x"), outbox.append(.text("late"))]
        #expect(accepted == [true, true, true, false])
        #expect(outbox.queuedBytes == 4)
        guard case .message(let first, false)? = outbox.popFirst() else { Issue.record("expected text"); return }
        #expect(first == Array("a".utf8))
        guard case .message(let second, true)? = outbox.popFirst() else { Issue.record("expected binary"); return }
        #expect(second == [1, 2, 3])
        guard case .close(4001, "x")? = outbox.popFirst() else { Issue.record("expected close"); return }
        #expect(outbox.isEmpty)
    }

    @Test func fragmenterSplitsBigMessages() {
        var fragmenter = OutgoingFragmenter(bytes: [UInt8](repeating: 0, count: OutgoingFragmenter.fragmentBytes * 2 + 1), isBinary: true)
        var pieces: [(Int, Bool, Bool)] = []
        while !fragmenter.isDone {
            let next = fragmenter.next()
            pieces.append((next.range.count, next.isFirst, next.isLast))
        }
        #expect(pieces.map(\.0) == [OutgoingFragmenter.fragmentBytes, OutgoingFragmenter.fragmentBytes, 1])
        #expect(pieces.map(\.1) == [true, false, false])
        #expect(pieces.map(\.2) == [false, false, true])
        var empty = OutgoingFragmenter(bytes: [], isBinary: false)
        let only = empty.next()
        let done = empty.isDone
        #expect(only.range.isEmpty && only.isFirst && only.isLast && done)
    }

    @Test func closePayloadRules() {
        func violation(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBytes { CloseFrameRules.violation(in: $0) } }
        #expect(violation([]) == nil)
        #expect(violation([0x03]) != nil)
        for code: UInt16 in [1000, 1001, 1003, 1007, 1011, 1012, 1014, 3000, 4999] {
            #expect(violation([UInt8(code >> 8), UInt8(code & 0xFF)]) == nil, "\(code)")
        }
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] {
            #expect(violation([UInt8(code >> 8), UInt8(code & 0xFF)]) == "invalid close code \(code)")
        }
        #expect(violation([0x03, 0xE8] + Array("bye ✓".utf8)) == nil)
        #expect(violation([0x03, 0xE8, 0xED, 0xA0, 0x80]) == "close reason is not UTF-8")
    }

    @Test func refusedUpgradeResponseIsTheAPIsErrorShape() throws {
        let response = RefusedUpgradeResponse(status: 429, code: "rate_limited", message: "slow \"down\"", retryAfterSeconds: 0)
        #expect(response.reasonPhrase == "Too Many Requests")
        #expect(response.headers.map(\.0) == ["retry-after"])
        #expect(response.headers.first?.1 == "1") // never 0: that would invite an immediate retry
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"error":{"code":"rate_limited","message":"slow \"down\""}}"#)
        #expect(RefusedUpgradeResponse(status: 404, code: "not_found", message: "", retryAfterSeconds: nil).headers.isEmpty)
    }

    @Test func outboxClosedByTheTransportDropsEverything() {
        var outbox = Outbox()
        let queued = outbox.append(.text("queued"))
        #expect(queued)
        outbox.closeDiscarding()
        #expect(outbox.isEmpty)
        #expect(outbox.queuedBytes == 0)
        let late = outbox.append(.text("late"))
        let close = outbox.appendClose(code: 1000, reason: "")
        #expect(!late && !close)
    }

    @Test func bodyPaceJudgesEachWindowAndTheDeadline() {
        var pace = BodyPace(deadlineSeconds: 30, minimumBytesPerSecond: 100, windowSeconds: 10, now: 0)
        #expect(pace.check(now: 0, bytes: 0) == .checkAgain(afterSeconds: 10))
        #expect(pace.check(now: 10, bytes: 1000) == .checkAgain(afterSeconds: 10)) // exactly the minimum
        guard case .tooSlow = pace.check(now: 20, bytes: 1999) else { Issue.record("999 bytes in 10 s passed"); return }
        var late = BodyPace(deadlineSeconds: 15, minimumBytesPerSecond: 0, windowSeconds: 10, now: 100)
        #expect(late.check(now: 110, bytes: 1) == .checkAgain(afterSeconds: 5)) // no minimum: only the deadline
        guard case .tooSlow = late.check(now: 115, bytes: 1) else { Issue.record("the deadline passed"); return }
    }
}

/// The per-client shares of the server's connections, as bookkeeping.
@Suite struct ConnectionSharesTests {
    @Test func anAddressIsFullAtItsCapAndFreedByACloseAndOthersAreCountedApart() {
        var shares = ConnectionShares(maxConnectionsPerAddress: 2, maxRequestsInFlightPerCredential: 0)
        shares.connectionOpened(from: "10.0.0.1")
        #expect(!shares.addressIsFull("10.0.0.1"))
        shares.connectionOpened(from: "10.0.0.1")
        #expect(shares.addressIsFull("10.0.0.1"))
        #expect(!shares.addressIsFull("10.0.0.2"))
        #expect(!shares.addressIsFull(nil))
        shares.connectionClosed(from: "10.0.0.1")
        #expect(!shares.addressIsFull("10.0.0.1"))
        shares.connectionClosed(from: "10.0.0.1")
        shares.connectionClosed(from: "10.0.0.1") // an extra close does not go below zero
        #expect(shares.connectionsByAddress.isEmpty)
        // No credential cap: never full.
        shares.requestStarted(with: "Bearer a")
        #expect(!shares.credentialIsFull("Bearer a"))
    }

    @Test func aCredentialIsFullAtItsCapOfRequestsInFlight() {
        var shares = ConnectionShares(maxConnectionsPerAddress: 0, maxRequestsInFlightPerCredential: 1)
        #expect(!shares.addressIsFull("10.0.0.1"))
        shares.requestStarted(with: "Bearer a")
        #expect(shares.credentialIsFull("Bearer a"))
        #expect(!shares.credentialIsFull("Bearer b"))
        #expect(!shares.credentialIsFull(nil))
        shares.requestEnded(with: "Bearer a")
        #expect(!shares.credentialIsFull("Bearer a"))
        #expect(shares.requestsByCredential.isEmpty)
    }
}
