/// Why one connection of a session ended without finalizing: what the kit decides on (`FailureClassification`),
/// and what a refused session reports (`SessionOutcome.refused`).
public struct ConnectionFailure: Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status the server answered the WebSocket upgrade with instead of 101; nil when the
    /// upgrade succeeded or no answer came at all.
    public var httpStatus: Int?
    /// The server's close code; nil when no close frame came (a drop, 1006, or no connection at all).
    public var closeCode: UInt16?
    /// The code of the fatal `error` the server sent on this connection before closing, if it sent one.
    public var errorCode: String?
    /// The fatal error's message, else the close reason or what the transport said.
    public var message: String
    /// How long the server asked to be left alone (`Retry-After` at the upgrade), in seconds.
    public var retryAfterSeconds: Double?

    public init(httpStatus: Int? = nil, closeCode: UInt16? = nil, errorCode: String? = nil, message: String,
                retryAfterSeconds: Double? = nil) {
        self.httpStatus = httpStatus
        self.closeCode = closeCode
        self.errorCode = errorCode
        self.message = message
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// One line for a person: what refused, its code, and the server's words.
    /// e.g. `HTTP 404 at the upgrade: no WebSocket endpoint at this URL's path (…)`,
    /// `unknown_provider (close 1008): provider 'nope' is not loaded`.
    public var description: String {
        if let httpStatus {
            let meaning = Self.statusMeaning[httpStatus].map { ": \($0)" } ?? ""
            return "HTTP \(httpStatus) at the upgrade\(meaning) (\(message))"
        }
        switch (errorCode, closeCode) {
        case (let error?, let close?): return "\(error) (close \(close)): \(message)"
        case (let error?, nil): return "\(error): \(message)"
        case (nil, let close?): return "close \(close): \(message)"
        case (nil, nil): return message
        }
    }

    /// What the statuses a device meets at the upgrade mean for it.
    private static let statusMeaning: [Int: String] = [
        400: "the server could not read the upgrade request",
        401: "the credential was not accepted (check the token)",
        403: "the credential may not do this",
        404: "no WebSocket endpoint at this URL's path (SpeakerSync listens on /v1/listen)",
        429: "too many requests",
        503: "the server is unavailable for now",
    ]
}
