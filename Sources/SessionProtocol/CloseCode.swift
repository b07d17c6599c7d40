/// WebSocket close codes the server uses (RFC 6455 §7.4 and application codes in 4000–4999).
public enum CloseCode {
    /// The session was finalized: everything is stored and the final transcript was sent.
    public static let normal: UInt16 = 1000
    /// The server is stopping. Everything acknowledged is stored; resume with the same conversation_id.
    public static let goingAway: UInt16 = 1001
    /// The start asked for audio the server cannot take (encoding, sample rate).
    public static let unsupportedData: UInt16 = 1003
    /// The start was missing or had invalid fields (including the conversation id).
    public static let invalidPayload: UInt16 = 1007
    /// The start named a provider the server does not have.
    public static let policyViolation: UInt16 = 1008
    /// A frame exceeded the size limit. Audio cannot be partly dropped without shifting the timeline.
    public static let messageTooBig: UInt16 = 1009
    /// The provider failed or the server hit a bug; stored data is kept, the client may resume.
    public static let internalError: UInt16 = 1011
    /// Application code: the provider is unavailable for now (held back after repeated crashes); retry
    /// later, or now with another provider.
    ///
    /// RFC 6455's registry has 1013 "Try Again Later", but WebSocket stacks written against the RFC's
    /// original list (libwebsockets 4.1, Debian's) treat 1012–2999 as reserved and fail the connection
    /// with 1002 instead, so the device would never see it. 4001 reaches every client.
    public static let providerUnavailable: UInt16 = 4001
    /// Application code: no frame (not even a keepalive) arrived within the idle limit.
    ///
    /// None of the RFC codes says "closed for inactivity, nothing is wrong, reconnect to resume":
    /// 1000 would tell the device the conversation is complete and 1008 that it misbehaved. Stored
    /// data is kept and reconnecting with the same conversation_id resumes the conversation.
    public static let idleTimeout: UInt16 = 4000
    /// Application code: the credential that opened the connection was revoked (or the admin key
    /// rotated) while the session ran. Stored data is kept; reconnect with a valid credential to resume.
    public static let credentialRevoked: UInt16 = 4003
    /// Application code: the device already runs as many sessions as the server allows at once
    /// (like HTTP 429); retry when one of them ends.
    public static let tooManySessions: UInt16 = 4029
    /// Application code: the client did not read what the server sent (more than the outgoing limit
    /// stayed unread past the grace period). Stored data is kept; reconnect, read, and resume.
    public static let slowReader: UInt16 = 4008
    /// Application code, the 4000-range twin of RFC 6455's 1013 "Try Again Later" (which Debian's
    /// libwebsockets 4.1 clients would turn into 1002, see `providerUnavailable`): the start could
    /// not be served now (its conversation could not be created or loaded in time because
    /// PostgreSQL is unavailable). Nothing was started or acknowledged; retry with backoff.
    public static let tryAgainLater: UInt16 = 4013
    /// Application code: the conversation was resumed on another connection (`resumed_elsewhere`).
    /// Do not reconnect this connection's session: the other one carries the conversation on.
    public static let resumedElsewhere: UInt16 = 4009
}
