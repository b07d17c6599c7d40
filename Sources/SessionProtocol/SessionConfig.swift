/// Limits and policy of one WebSocket session. The server passes the same values to the transport
/// (frame size limits) so both layers agree.
public struct SessionConfig: Hashable, Sendable {
    /// Accepted `sample_rate` values in Hz. 8 kHz telephony to 48 kHz studio audio; the server
    /// resamples to what the provider needs. Beyond 48 kHz buys nothing for speech.
    public var sampleRateRange: ClosedRange<Int>
    /// Most words in one `words` message (also the most segments in one `segments` message).
    public var maxWordsPerMessage: Int
    /// Largest text frame in bytes (a 10,000-word message is about 1 MB).
    public var maxTextFrameBytes: Int
    /// Largest binary frame in bytes (1 MiB is over 5 s of 48 kHz float audio).
    public var maxBinaryFrameBytes: Int
    /// Longest accepted string field (word text, ids, names, labels), in Unicode scalars.
    public var maxStringLength: Int
    /// Providers this server has; nil means "not checked here" (the server checks after `.begin`).
    public var knownProviders: Set<String>?
    /// The provider of a `start` message that names none (the server sets its best loaded provider).
    public var defaultProvider: String?
    /// How often the runner calls `SessionStateMachine.idleTimeout()`; a silent client is closed after
    /// one to two intervals.
    public var idleIntervalSeconds: Double
    /// Most `shadow_providers` one session may run beside its provider. Each is a provider instance
    /// in its own worker doing the primary's work again, so on a machine sized for N live sessions
    /// every shadow takes one of them; 2 lets a developer compare three engines at once.
    public var maxShadowProviders: Int

    public init(
        sampleRateRange: ClosedRange<Int> = 8_000...48_000,
        maxWordsPerMessage: Int = 10_000,
        maxTextFrameBytes: Int = 4 << 20,
        maxBinaryFrameBytes: Int = 1 << 20,
        maxStringLength: Int = 1_024,
        knownProviders: Set<String>? = nil,
        idleIntervalSeconds: Double = 30,
        defaultProvider: String? = nil,
        maxShadowProviders: Int = 2
    ) {
        self.maxShadowProviders = maxShadowProviders
        self.defaultProvider = defaultProvider
        self.sampleRateRange = sampleRateRange
        self.maxWordsPerMessage = maxWordsPerMessage
        self.maxTextFrameBytes = maxTextFrameBytes
        self.maxBinaryFrameBytes = maxBinaryFrameBytes
        self.maxStringLength = maxStringLength
        self.knownProviders = knownProviders
        self.idleIntervalSeconds = idleIntervalSeconds
    }

    public static let `default` = SessionConfig()
}
