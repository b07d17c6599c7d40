import Foundation

/// Everything a `SpeakerSyncSession` is told; `url`, `provider` and `sampleRate` have no default.
public struct SpeakerSyncSessionConfig: Sendable {
    /// `ws://host:port/v1/listen` or `wss://…`.
    public var url: String
    /// The device token (or admin key), sent as `Authorization: Bearer` on every connection.
    public var token: String?
    /// nil: the server takes the device from the device token. The admin key must name one.
    public var deviceID: String?
    public var provider: String
    public var sampleRate: Int
    public var format: AudioFormat
    /// Chosen here, not by the server, so that the very first reconnect can resume it.
    public var conversationID: String
    public var language: String?
    /// The start's `options` object as JSON text.
    public var optionsJSON: String?
    /// The start's `asr`: nil or "device" (the app sends words), "server" (the server recognises the
    /// audio itself; the app sends audio only).
    public var asr: String?
    /// The start's `shadow_providers`: providers the server runs beside `provider` on the same audio,
    /// for comparison (their labels are stored, never sent). Empty: none.
    public var shadowProviders: [String] = []
    /// The start's `shadow_options`: provider id → options as JSON object text.
    public var shadowOptionsJSON: [String: String] = [:]
    /// The start's `store_audio`: the server keeps the session's audio (lossless) for playback and re-diarization.
    public var storeAudio = false
    /// Where this session's first sample lies on the conversation's timeline; nil: where the server's
    /// stored audio ends (0 for a new conversation). Later connections always resume where the server is.
    public var audioOffsetSeconds: Double?
    public var reconnect: ReconnectPolicy
    /// Audio kept for resending after a drop. The server stores its audio position every few seconds,
    /// so a resume needs only the last seconds; the rest covers outages (offline recording), within
    /// this bound: 900 s of 16 kHz 16-bit mono is 28.8 MB.
    public var retentionSeconds: Double
    /// A connection that has not started its session within this long is dropped and retried.
    public var openTimeoutSeconds: Double
    /// The first session must start within this long of `start()`, whatever the retries are doing,
    /// or the session ends `.stopped` with the reason (a command-line tool's bound on "is the server
    /// there at all"). nil: keep trying for as long as the reconnect policy does (a device that records
    /// offline and uploads later).
    public var startTimeoutSeconds: Double?
    /// A folder for retained audio on disk (a subfolder per conversation, files of a minute each,
    /// deleted as the server stores them); nil keeps it in memory. On a phone: the app's caches folder.
    public var spoolDirectory: URL?

    public init(url: String, token: String? = nil, deviceID: String? = nil, provider: String, sampleRate: Int,
                format: AudioFormat = .pcmS16LE, conversationID: String = UUID().uuidString.lowercased()) {
        self.url = url
        self.token = token
        self.deviceID = deviceID
        self.provider = provider
        self.sampleRate = sampleRate
        self.format = format
        self.conversationID = conversationID
        self.language = nil
        self.optionsJSON = nil
        self.asr = nil
        self.audioOffsetSeconds = nil
        self.reconnect = .default
        self.retentionSeconds = 900
        // Generous: a first session may wait for a provider worker to start and load its models.
        self.openTimeoutSeconds = 30
        self.startTimeoutSeconds = nil
        self.spoolDirectory = nil
    }
}

/// What a session tells the app, in order.
public enum SessionEvent: Sendable {
    /// The server started or resumed the conversation (on every connection).
    case started(conversationID: String, resumed: Bool, audioOffsetSeconds: Double)
    /// Utterances inserted or replaced, ids removed (`transcript` message); `isFinal` on the last one.
    case transcript(upserted: [LiveUtterance], removed: [String], isFinal: Bool)
    /// The complete speaker list: label → display name (after renames), and merges.
    case speakers([SpeakerInfo])
    /// The server's `stats` message at finalize (JSON text: latency, speakers, RTF; docs/protocol.md).
    case stats(String)
    case error(code: String, message: String, fatal: Bool)
    case state(ConnectionState)
    /// A server message this kit has no event of its own for (one added to the protocol after these
    /// events), decoded: an app can act on it before the kit learns it.
    case message(ServerMessage)
}

/// An entry of the speaker list: the protocol's `WireSpeaker` (`label`, display `name`, `mergedInto`).
public typealias SpeakerInfo = WireSpeaker
