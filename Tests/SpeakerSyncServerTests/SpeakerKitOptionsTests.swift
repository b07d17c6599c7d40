import Logging
import PluginHost
import Testing
@testable import SpeakerSyncServer

/// speakerkit's start options through the real dlopen'd plugin: a typo or a value out of range fails
/// the start with the plugin's own message (`invalid_options`, which the server sends with close 1007),
/// never a silent default or a truncated number.
@Suite struct SpeakerKitOptionsTests {
    let plugins = PluginRegistry(directory: ResourceLocator.pluginsDirectory(nil), logger: Logger(label: "test"))

    @Test(arguments: [
        (#"{"num_speaker": 3}"#, "unknown option 'num_speaker' (known: num_speakers, min_speakers"),
        (#"{"num_speakers": 2.5}"#, "num_speakers must be an integer from 1 to 64"),
        (#"{"min_speakers": 4, "max_speakers": 2}"#, "min_speakers (4) is above max_speakers (2)"),
        (#"{"minimum_batch": 2.7}"#, "minimum_batch must be an integer from 1 to 8"),
        (#"{"minimum_batch": 9}"#, "minimum_batch must be an integer from 1 to 8"),
        (#"{"switch_penalty": "high"}"#, "switch_penalty must be a number in 0.0...2.0"),
        (#"{"offline_clustering": "spectral"}"#, "offline_clustering must be one of: smoothed_kmeans, agglomerative"),
        (#"{"uncounted_voice_margin": 1.5}"#, "uncounted_voice_margin must be a number in 0.0...1.0"),
        (#"{"live_recluster_seconds": -1}"#, "live_recluster_seconds must be a number in 0.0...300.0"),
        (#"{"live_solo_seconds": 11}"#, "live_solo_seconds must be a number in 0.0...10.0"),
        (#"{"overlap": 2}"#, "overlap must be a number in 0.0...1.0"),
        (#"{"overlap": "yes"}"#, "overlap must be a number in 0.0...1.0"),
    ])
    func badOptionsFailTheStartWithTheReason(options: String, expected: String) throws {
        do {
            _ = try plugins.makeInstance(providerID: "speakerkit", sessionID: "s", optionsJSON: options)
            Issue.record("options \(options) were accepted")
        } catch {
            #expect(error.code == .invalidOptions)
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test func everyDocumentedOptionIsAccepted() throws {
        let options = """
            {"min_speakers": 1, "max_speakers": 4, "speaker_threshold": 0.5, "cluster_threshold": 0.3,
             "enrolled_speaker_threshold": 0.1, "offline_clustering": "agglomerative", "switch_penalty": 0.3,
             "minimum_count_gain": 0.08, "minimum_count_coherence": 2, "speaker_change_pause_seconds": 0.25,
             "speaker_change_pause_decibels": 25, "minimum_stretch_frames": 2, "uncounted_voice_seconds": 4,
             "uncounted_voice_margin": 0.12, "window_seconds": 1.5,
             "frame_seconds": 0.5, "minimum_batch": 3, "analysis_block_seconds": 0.5, "live_recluster_seconds": 10,
             "live_solo_seconds": 1, "overlap": false, "segmented_voice_split": 1}
            """
        let instance = try plugins.makeInstance(providerID: "speakerkit", sessionID: "s", optionsJSON: options)
        let exact = try plugins.makeInstance(providerID: "speakerkit", sessionID: "t", optionsJSON: #"{"num_speakers": 2}"#)
        _ = (instance, exact)
    }
}
