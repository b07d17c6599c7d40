import Foundation
import StreamingDiarization

/// A session's `options` for a provider built on `StreamingDiarizer` (speakerkit, and sherpa-onnx's
/// live part): speaker-count hints and tuning knobs, applied over the provider's base config.
///
/// `{"num_speakers": 3}` (exact), `{"min_speakers": 2, "max_speakers": 4}`, and for experiments
/// `speaker_threshold`, `cluster_threshold` (cosine distances), `window_seconds`, and the offline pass
/// at finalize: `offline_clustering` (`smoothed_kmeans` or `agglomerative`), `switch_penalty`,
/// `minimum_count_gain`, `uncounted_voice_seconds` and `uncounted_voice_margin` (the search for a voice
/// the count missed), `enrolled_speaker_threshold` (the finalize check on enrolled names), and
/// `live_recluster_seconds` (finalize's re-clustering run live early in the session; 0: off), and
/// `live_solo_seconds` (the solo speech a segmentation window's voice needs to raise the live passes'
/// count floor; 0: no floor).
///
/// Strict, as the energy plugin is: a key it does not know is refused with the list of known keys, so a
/// typo (`num_speaker`) fails the start instead of silently running with the defaults; integers must be
/// whole numbers in range rather than being truncated.
public struct DiarizerOptions: Sendable {
    /// Every key the options object may hold, in the order the error message lists them.
    public static let knownKeys = [
        "num_speakers", "min_speakers", "max_speakers",
        "speaker_threshold", "cluster_threshold", "enrolled_speaker_threshold",
        "offline_clustering", "switch_penalty", "minimum_count_gain", "minimum_count_coherence",
        "speaker_change_pause_seconds", "speaker_change_pause_decibels", "minimum_stretch_frames",
        "uncounted_voice_seconds", "uncounted_voice_margin", "segmented_voice_split", "orphan_voice_seconds",
        "silence_trim", "solo_relabel_share",
        "window_seconds", "frame_seconds", "minimum_batch", "analysis_block_seconds",
        "live_recluster_seconds", "live_solo_seconds",
    ]


    public var hint = SpeakerCountHint.none
    public var config: DiarizerConfig
    /// The provider's own keys (`extraKeys`) as given, for it to read.
    public var extra: [String: Double] = [:]

    /// `base`: the provider's defaults (thresholds calibrated for its embeddings). `extraKeys`: numeric
    /// options of the provider's own, each with its range; they are checked here and left in `extra`.
    public init(json: String?, base: DiarizerConfig = .default, extraKeys: [String: ClosedRange<Double>] = [:]) throws(OptionsError) {
        config = base
        guard let json, !json.trimmingCharacters(in: .whitespaces).isEmpty else { return }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            throw OptionsError("options must be a JSON object")
        }
        let allKeys = Self.knownKeys + extraKeys.keys.sorted()
        if let unknown = object.keys.sorted().first(where: { !allKeys.contains($0) }) {
            throw OptionsError("unknown option '\(unknown)' (known: \(allKeys.joined(separator: ", ")))")
        }
        func integer(_ key: String, _ range: ClosedRange<Int>) throws(OptionsError) -> Int? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let number = value as? NSNumber, let int = Int(exactly: number.doubleValue), range.contains(int) else {
                throw OptionsError("\(key) must be an integer from \(range.lowerBound) to \(range.upperBound)")
            }
            return int
        }
        func count(_ key: String) throws(OptionsError) -> Int? { try integer(key, 1 ... 64) }
        func distance(_ key: String, _ range: ClosedRange<Double>) throws(OptionsError) -> Double? {
            guard let value = object[key], !(value is NSNull) else { return nil }
            guard let number = value as? NSNumber, range.contains(number.doubleValue) else {
                throw OptionsError("\(key) must be a number in \(range.lowerBound)...\(range.upperBound)")
            }
            return number.doubleValue
        }
        hint = SpeakerCountHint(exact: try count("num_speakers"), minimum: try count("min_speakers"), maximum: try count("max_speakers"))
        if let minimum = hint.minimum, let maximum = hint.maximum, minimum > maximum {
            throw OptionsError("min_speakers (\(minimum)) is above max_speakers (\(maximum))")
        }
        if let value = try distance("speaker_threshold", 0.01 ... 2) { config.speakerThreshold = Float(value) }
        if let value = try distance("cluster_threshold", 0.01 ... 2) { config.clusterThreshold = Float(value) }
        if let value = try distance("enrolled_speaker_threshold", 0 ... 2) { config.enrolledSpeakerThreshold = Float(value) }
        if let value = try distance("switch_penalty", 0 ... 2) { config.switchPenalty = Float(value) }
        if let value = try distance("minimum_count_gain", 0 ... 1) { config.minimumCountGain = Float(value) }
        if let value = try distance("minimum_count_coherence", 0 ... 20) { config.minimumCountCoherence = Float(value) }
        if let value = try distance("speaker_change_pause_seconds", 0.05 ... 2) { config.speakerChangePauseSeconds = value }
        if let value = try distance("speaker_change_pause_decibels", 0 ... 60) { config.speakerChangePauseDecibels = value }
        if let value = try integer("minimum_stretch_frames", 0 ... 20) { config.minimumStretchFrames = value }
        if let value = try distance("uncounted_voice_seconds", 0.5 ... 60) { config.uncountedVoiceSeconds = value }
        if let value = try distance("uncounted_voice_margin", 0 ... 1) { config.uncountedVoiceMargin = Float(value) }
        if let value = try distance("segmented_voice_split", 0 ... 1) { config.segmentedVoiceSplit = value != 0 }
        if let value = try distance("orphan_voice_seconds", 0 ... 60) { config.orphanVoiceSeconds = value }
        if let value = try distance("silence_trim", 0 ... 1) { config.silenceTrim = value != 0 }
        if let value = try distance("solo_relabel_share", 0 ... 1) { config.soloRelabelShare = value }
        if let value = object["offline_clustering"], !(value is NSNull) {
            guard let name = value as? String, let method = OfflineClustering(rawValue: name) else {
                throw OptionsError("offline_clustering must be one of: \(OfflineClustering.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            config.offlineClustering = method
        }
        if let value = try distance("window_seconds", 0.5 ... 4) { config.windowSeconds = value }
        if let value = try distance("frame_seconds", 0.25 ... 2) { config.frameSeconds = value }
        if let value = try integer("minimum_batch", 1 ... 8) { config.minimumBatch = value }
        if let value = try distance("analysis_block_seconds", 0 ... 1) { config.analysisBlockSeconds = value }
        if let value = try distance("live_recluster_seconds", 0 ... 300) { config.liveReclusterSeconds = value }
        if let value = try distance("live_solo_seconds", 0 ... 10) { config.liveSoloSpeakerSeconds = value }
        for (key, range) in extraKeys {
            if let value = try distance(key, range) { extra[key] = value }
        }
    }
}

public struct OptionsError: Error, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
}
