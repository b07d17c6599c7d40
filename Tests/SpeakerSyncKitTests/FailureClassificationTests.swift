import Foundation
import Testing
@testable import SpeakerSyncKit

/// The table of docs/client.md, row by row: what the kit retries and what stops it.
@Suite struct FailureClassificationTests {
    static let retry = FailureClassification.retryable(notBeforeSeconds: nil)

    static func classify(http: Int? = nil, close: UInt16? = nil, error: String? = nil, retryAfter: Double? = nil) -> FailureClassification {
        FailureClassification(ConnectionFailure(httpStatus: http, closeCode: close, errorCode: error, message: "m", retryAfterSeconds: retryAfter))
    }

    @Test func upgradeStatusesAClientCannotChangeAreTerminalAndBusyOnesAreRetriedAfterRetryAfter() {
        for status in [400, 401, 403, 404, 405, 410, 426] {
            #expect(Self.classify(http: status) == .terminal, "\(status)")
        }
        for status in [408, 429, 500, 502, 503, 504] {
            #expect(Self.classify(http: status) == Self.retry, "\(status)")
        }
        #expect(Self.classify(http: 429, retryAfter: 7) == .retryable(notBeforeSeconds: 7))
        #expect(Self.classify(http: 503, retryAfter: 30) == .retryable(notBeforeSeconds: 30))
        // A day-long Retry-After is held to the cap; a negative one to 0.
        #expect(Self.classify(http: 503, retryAfter: 86_400) == .retryable(notBeforeSeconds: FailureClassification.maximumRetryAfterSeconds))
        #expect(Self.classify(http: 503, retryAfter: -5) == .retryable(notBeforeSeconds: 0))
        // Something between the device and the server (a captive portal's 200 or 302): retried.
        #expect(Self.classify(http: 200) == Self.retry)
        #expect(Self.classify(http: 302) == Self.retry)
    }

    @Test func closeCodes() {
        for code: UInt16? in [nil, 1000, 1001, 1002, 1006, 1011, 1012, 1013, 4000, 4008, 4013, 4029, 4999] {
            #expect(Self.classify(close: code) == Self.retry, "\(String(describing: code))")
        }
        for code: UInt16 in [1003, 1007, 1008, 1009, 4001, 4003, 4009] {
            #expect(Self.classify(close: code) == .terminal, "\(code)")
        }
    }

    @Test func fatalErrorCodes() {
        let terminal = ["unknown_provider", "provider_unavailable", "asr_unavailable", "device_mismatch", "conversation_not_found",
                        "credential_revoked", "storage_rejected", "missing_field", "frame_too_large", "resumed_elsewhere",
                        "invalid_field", "invalid_options", "invalid_conversation_id", "invalid_text", "invalid_anything_new",
                        "unsupported_encoding", "unsupported_sample_rate"]
        for code in terminal {
            #expect(FailureClassification.forErrorCode(code) == .terminal, "\(code)")
        }
        let retryable = ["idle_timeout", "provider_failed", "internal_error", "too_many_sessions", "storage_unavailable",
                         "server_stopping", "slow_reader", "rate_limited", "conversation_busy"]
        for code in retryable {
            #expect(FailureClassification.forErrorCode(code) == Self.retry, "\(code)")
        }
        #expect(FailureClassification.forErrorCode("brand_new_code") == nil)
    }

    @Test func theErrorCodeWinsOverTheCloseCodeAndAnUnknownOneDefersToIt() {
        // A named shadow that is unavailable closes 4001 after provider_unavailable; a crashed provider 1011.
        #expect(Self.classify(close: 4001, error: "provider_unavailable") == .terminal)
        #expect(Self.classify(close: 1011, error: "provider_failed") == Self.retry)
        // The error code decides even where the close code alone would say otherwise.
        #expect(Self.classify(close: 1011, error: "storage_rejected") == .terminal)
        #expect(Self.classify(close: 1011, error: "invalid_text") == .terminal)
        #expect(Self.classify(close: 1008, error: "too_many_sessions") == Self.retry)
        #expect(Self.classify(close: nil, error: "unknown_provider") == .terminal) // the close frame was lost
        #expect(Self.classify(close: 4013, error: "storage_unavailable") == Self.retry)
        // A code this kit does not know: the close code decides.
        #expect(Self.classify(close: 1011, error: "brand_new_code") == Self.retry)
        #expect(Self.classify(close: 1008, error: "brand_new_code") == .terminal)
        // The upgrade's status decides over anything else.
        #expect(Self.classify(http: 404, close: 1011, error: "provider_failed") == .terminal)
    }

    @Test func retryAfterIsReadInBothForms() throws {
        let now = try #require(ISO8601DateFormatter().date(from: "2037-10-21T07:27:00Z"))
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds(" 5 ", now: now) == 5)
        #expect(RetryAfter.seconds("Wed, 21 Oct 2037 07:28:00 GMT", now: now) == 60)
        #expect(RetryAfter.seconds("Wed, 21 Oct 2037 07:26:00 GMT", now: now) == 0) // already past
        for invalid in ["", "-1", "1.5", "soon", "21 Oct 2037"] {
            #expect(RetryAfter.seconds(invalid, now: now) == nil, "\(invalid)")
        }
    }

    @Test func aFailureReadsAsOneLine() {
        #expect(ConnectionFailure(httpStatus: 404, message: "HS: ws upgrade response not 101").description
            == "HTTP 404 at the upgrade: no WebSocket endpoint at this URL's path (SpeakerSync listens on /v1/listen) (HS: ws upgrade response not 101)")
        #expect(ConnectionFailure(closeCode: 1008, errorCode: "unknown_provider", message: "no provider 'x'").description
            == "unknown_provider (close 1008): no provider 'x'")
        #expect(ConnectionFailure(errorCode: "invalid_text", message: "m").description == "invalid_text: m")
        #expect(ConnectionFailure(closeCode: 4001, message: "provider_unavailable").description == "close 4001: provider_unavailable")
    }
}
