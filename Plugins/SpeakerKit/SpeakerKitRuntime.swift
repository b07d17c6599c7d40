import CSpeakerSyncPluginABI
import Foundation
import Logging
import SpeakerEmbedding
import Synchronization
import VoiceActivity

/// What every speakerkit session shares, made once in init(): the host's log, the GE2E encoder (5.7 MB
/// of weights, immutable, safe from every session queue at once) and the VAD configuration.
final class SpeakerKitRuntime: Sendable {
    let logger: Logger
    let encoder: SpeakerEncoder
    let vadConfig: VADConfig

    init(host: UnsafePointer<speakersync_host_t>) throws {
        var logger = Logger(label: "speakerkit") { _ in HostLogHandler(host: host) }
        logger.logLevel = .info
        self.logger = logger
        encoder = try SpeakerEncoder(logger: logger)
        vadConfig = .default
        // Load the VAD library and model once now, so a missing vendor/ fails loading, not a session.
        _ = try SileroVoiceActivityDetector(config: vadConfig, logger: logger)
    }

    func makeDetector() throws -> SileroVoiceActivityDetector {
        try SileroVoiceActivityDetector(config: vadConfig, logger: logger)
    }

    /// Set by init(), cleared by deinit(); read by sessions created in between.
    static let shared = Mutex<SpeakerKitRuntime?>(nil)
}
