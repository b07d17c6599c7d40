/// Where a session's connection stands, for the app to show ("Reconnecting…", an offline badge).
public enum ConnectionState: Sendable, Equatable {
    /// Opening the WebSocket (first time).
    case connecting
    /// Streaming live: the server has started (or resumed) the conversation.
    case connected(conversationID: String)
    /// The connection dropped; reconnecting to resume the conversation (attempt 1, 2, …).
    case resuming(attempt: Int)
    /// The server is unreachable; audio and words are kept (within the retention) and sent on reconnect.
    case offline(retryInSeconds: Double, attempt: Int, reason: String)
    /// Finished: finalized (everything stored) or failed for good (a refusal that retrying cannot fix).
    case finished(SessionOutcome)
}

/// How a session ended.
public enum SessionOutcome: Sendable, Equatable {
    /// The server stored everything and closed with 1000.
    case finalized
    /// The session stopped at once on a failure retrying cannot fix (`FailureClassification`: a wrong
    /// URL, a refused credential, a bad start, an unknown or unavailable provider, text the server cannot
    /// store): the HTTP status or close code, the error code and the message, in one printable value.
    case refused(ConnectionFailure)
    /// The reconnect policy gave up, no session started within `startTimeoutSeconds`, or the app
    /// cancelled; `closeCode` is the last connection's.
    case stopped(closeCode: UInt16?, reason: String)
}
