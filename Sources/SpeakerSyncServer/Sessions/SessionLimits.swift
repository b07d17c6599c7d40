/// How much one session may hold in the server's memory, and how long its start may wait for
/// PostgreSQL. Each bound pauses reading the session's socket (TCP then pushes back on the device)
/// rather than dropping anything, except the outgoing one: a client that does not read what it is
/// sent past a grace period is cut off (`slow_reader`, close 4008), since nothing else bounds it.
///
/// With the defaults a client that sends as fast as it can and never reads costs the server at most
/// input 1 MiB + steps awaiting commit 4 MiB + outgoing 4 MiB + the provider's 60 s of 16 kHz audio
/// (3.7 MiB) + its transcript state; docs/reliability.md has the measured figure (about 24 MiB).
public struct SessionLimits: Sendable {
    /// Bytes of received frames (text and binary) queued for the session's queue, or held while its
    /// start is under way, beyond which reading pauses; it resumes below `inputResumeBytes`.
    public var inputPauseBytes = 1 << 20
    public var inputResumeBytes = 256 << 10
    /// Audio handed to a provider worker (or the speech recogniser) and not yet processed beyond this
    /// pauses reading too: a worker slower than the device must not make the server buffer without bound.
    public var providerBacklogPauseSamples = 60 * 16_000
    public var providerBacklogResumeSamples = 15 * 16_000
    /// Store steps of the session not yet committed (an outage, a slow disk) beyond which reading
    /// pauses, by count and by their estimated size.
    public var pendingStepsPauseCount = 32
    public var pendingStepsResumeCount = 8
    public var pendingStepsPauseBytes = 4 << 20
    /// Outgoing bytes queued for the connection beyond which reading pauses (the session's output is
    /// driven by its input); below `outboundResumeBytes` it resumes. Above the pause level for
    /// `slowReaderGraceSeconds` the session ends with `slow_reader`.
    public var outboundPauseBytes = 4 << 20
    public var outboundResumeBytes = 1 << 20
    public var slowReaderGraceSeconds = 10.0
    /// How long a start may wait for PostgreSQL (to read, create or load its conversation) before it
    /// is refused with `storage_unavailable` (close 4013, try again later). Input that arrives
    /// meanwhile is held (within `inputPauseBytes`) and handled once `session` is sent.
    public var startStorageWaitSeconds = 10.0
    /// Words one conversation may hold (a live session keeps them all in memory):
    /// a words message that would go past it is refused with the non-fatal `too_many_words` and not
    /// stored. 50,000 is over eight hours of a meeting at 100 words a minute. 0: no limit. Without
    /// it a client sending words as fast as it could grew one session by 200 MiB in 20 s.
    public var maxConversationWords = 50_000
    /// Audio a device may keep stored (`store_audio`) over all its conversations; past it a session
    /// goes on without storing audio (non-fatal `audio_not_stored`). 0: no quota. At 16 kHz a day of
    /// audio is about 2 GB of FLAC.
    public var storedAudioQuotaSecondsPerDevice = 24.0 * 3600
    /// Free space the disk holding the embedded cluster's data keeps: below it `store_audio` is not
    /// honoured (`audio_not_stored`) and the server logs it. 0: no watermark.
    public var minimumFreeDiskBytes: Int64 = 1 << 30

    public init() {}

    public static let `default` = SessionLimits()
}
