import PluginHost
import TranscriptMerge

/// What the HTTP routes read and change, handed to `APIHandler` in one value. Only `reader` and
/// `providers` are required: a server without one of the others answers its routes 404 (tests run
/// such servers), so each is optional and set where the server has it.
struct APIServices: Sendable {
    var reader: any ConversationReader
    var providers: any ProviderHost
    var voices: (any VoiceDirectory)? = nil
    /// The provider new sessions get when they name none, as `/v1/providers` reports it.
    var defaultProvider: String? = nil
    /// How providers run (`process`, `session`, `none`), as `/v1/providers` reports it.
    var isolation: String = "none"
    /// Token and admin-key routes.
    var credentials: CredentialService? = nil
    /// The running sessions, for the console.
    var sessions: SessionManager? = nil
    /// The sessions other servers of the fleet run (nil: this server is alone, in memory).
    var fleetSessions: (any FleetSessionDirectory)? = nil
    var testRecordings: TestRecordingService? = nil
    /// Device settings and speaker corrections.
    var devices: (any DeviceDirectory)? = nil
    /// Stored labellings to compare and references to upload.
    var labellings: (any LabellingDirectory)? = nil
    var eraser: (any ConversationEraser)? = nil
    var rediarization: DiarizationJobService? = nil
    /// What one device may hold of the job pools (the admin: the pools only).
    var jobShares: JobShareConfig = .default
    var merge: MergeConfig = .default
    /// PostgreSQL's state as the background probe last saw it (nil: checked on the spot).
    var readiness: ReadinessProbe? = nil

    init(reader: any ConversationReader, providers: any ProviderHost) {
        self.reader = reader
        self.providers = providers
    }
}
