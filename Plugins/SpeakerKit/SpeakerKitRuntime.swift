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

    /// A VAD for a new session: one a finished session gave back (reset: `resetStartsANewTimeline`
    /// shows a reset detector gives a fresh one's segments), else a new one. Creating one builds an
    /// onnxruntime session, the most expensive part of starting a speakerkit session (a hundred
    /// sessions starting together took 1.1 s each in process), so detectors are kept for the next.
    func takeDetector() throws -> SileroVoiceActivityDetector {
        if let idle = idleDetectors.withLock({ $0.popLast() }) { return idle }
        return try SileroVoiceActivityDetector(config: vadConfig, logger: logger)
    }

    /// A finished session's VAD, kept for the next session (at most `maximumIdleDetectors`).
    func giveBack(_ detector: SileroVoiceActivityDetector) {
        detector.reset()
        idleDetectors.withLock { idle in
            if idle.count < Self.maximumIdleDetectors { idle.append(detector) }
        }
    }

    private let idleDetectors = Mutex<[SileroVoiceActivityDetector]>([])
    /// About 5 MB each: enough for a burst of sessions, not a hoard.
    static let maximumIdleDetectors = 64

    /// Set by init(), cleared by deinit(); read by sessions created in between.
    static let shared = Mutex<SpeakerKitRuntime?>(nil)
}
