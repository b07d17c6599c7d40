/// Whether a session reconnects after a connection ended, or stops for good: the one place the kit
/// decides it (docs/client.md has the table). A device keeps what it recorded until the server has
/// stored it, so anything that may heal by itself (the network, a restarting server, storage that is
/// down, too many sessions) is retried; what the same request will meet again (a wrong URL, a refused
/// credential, a start the server cannot take, a provider it lacks) stops at once with the reason.
public enum FailureClassification: Sendable, Equatable {
    /// Reconnect and resume after the backoff; not before `notBeforeSeconds` when the server said so.
    case retryable(notBeforeSeconds: Double?)
    /// Retrying cannot fix it: the session ends `refused`.
    case terminal

    /// The longest `Retry-After` honoured: beyond it the backoff's own schedule applies again, so a
    /// broken proxy's answer cannot park a device for a day.
    public static let maximumRetryAfterSeconds: Double = 3600

    /// The decision for a connection that ended without finalizing. An HTTP status at the upgrade
    /// decides alone (no session existed); otherwise a fatal error code the server sent before
    /// closing wins over the close code (it says more: 1008 is both a bad provider and another
    /// device); an error code not known here defers to the close code.
    public init(_ failure: ConnectionFailure) {
        if let status = failure.httpStatus {
            self = Self.forHTTPStatus(status, retryAfterSeconds: failure.retryAfterSeconds)
        } else if let code = failure.errorCode, let known = Self.forErrorCode(code) {
            self = known
        } else {
            self = Self.forCloseCode(failure.closeCode)
        }
    }

    /// An upgrade answered with `status` instead of 101.
    /// - 408, 429 and 5xx: the server is busy, stopping or failing for now; retried, honouring Retry-After.
    /// - Every other 4xx (400 bad request, 401 bad credential, 403 forbidden, 404 wrong path, …):
    ///   the same request gets the same answer; terminal.
    /// - Anything else (a 200 or a 302): something stands between the device and the server (a
    ///   captive portal, a proxy); retried, since a phone that stopped there would lose its recording.
    public static func forHTTPStatus(_ status: Int, retryAfterSeconds: Double? = nil) -> FailureClassification {
        switch status {
        case 408, 429, 500...599:
            return .retryable(notBeforeSeconds: retryAfterSeconds.map { min(max(0, $0), maximumRetryAfterSeconds) })
        case 400...499:
            return .terminal
        default:
            return .retryable(notBeforeSeconds: nil)
        }
    }

    /// A fatal `error` code (docs/protocol.md §5); nil for a code this kit does not know.
    public static func forErrorCode(_ code: String) -> FailureClassification? {
        if terminalErrorCodes.contains(code) || code.hasPrefix("invalid_") || code.hasPrefix("unsupported_") { return .terminal }
        if retryableErrorCodes.contains(code) { return .retryable(notBeforeSeconds: nil) }
        return nil
    }

    /// A close code (nil: no close frame, i.e. 1006 or a connection that never opened).
    /// Terminal: 1003 unsupported audio, 1007 invalid start, 1008 policy (unknown provider, another
    /// device), 1009 frame too large, 4001 provider unavailable, 4003 credential revoked, 4009 resumed
    /// on another connection. Every other
    /// code is retried: 1001 going away, 1011 server error, 1012 restart, 1013 and 4013 try again
    /// later, 4000 idle, 4008 slow reader, 4029 too many sessions, and codes this kit does not know.
    public static func forCloseCode(_ code: UInt16?) -> FailureClassification {
        guard let code, terminalCloseCodes.contains(code) else { return .retryable(notBeforeSeconds: nil) }
        return .terminal
    }

    /// Also terminal: any `invalid_*` and `unsupported_*` code (`invalid_field`, `invalid_options`,
    /// `invalid_conversation_id`, `invalid_text`, `unsupported_encoding`, …).
    static let terminalErrorCodes: Set<String> = [
        "unknown_provider", "provider_unavailable", "asr_unavailable", "device_mismatch", "conversation_not_found",
        "credential_revoked", "storage_rejected", "missing_field", "frame_too_large",
        // Another connection carries the conversation on: reconnecting would take it back from it.
        "resumed_elsewhere",
    ]

    static let retryableErrorCodes: Set<String> = [
        "idle_timeout", "provider_failed", "internal_error", "too_many_sessions", "storage_unavailable",
        "server_stopping", "slow_reader", "rate_limited", "conversation_busy",
    ]

    static let terminalCloseCodes: Set<UInt16> = [1003, 1007, 1008, 1009, 4001, 4003, 4009]
}
