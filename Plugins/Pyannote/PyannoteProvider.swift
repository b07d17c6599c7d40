import CSpeakerSyncPluginABI
import DiarizationModels
import Foundation
import Logging
import OverlapDiarization
import ProviderPluginKit
import SherpaOnnxSpeakers
import StreamingDiarization

/// The `pyannote` provider: pyannote segmentation-3.0 over a rolling window, CAM++ embeddings of each
/// local speaker, one-to-one incremental clustering live and one re-clustering at finalize
/// (`OverlapDiarizer`). Turns may overlap.
final class PyannoteProvider: PluginProvider {
    /// Session options: the count hints, and the pipeline's own.
    static let optionKeys: [String: ClosedRange<Double>] = [
        "step_seconds": 0.25 ... 5, "segmentation_window_seconds": 2 ... 10, "new_speaker_distance": 0.01 ... 2,
        "final_distance": 0.01 ... 2, "min_cluster_seconds": 0 ... 600, "final_pass": 0 ... 1,
    ]
    static let sharedKeys: Set<String> = ["num_speakers", "min_speakers", "max_speakers", "enrolled_speaker_threshold"]

    let descriptor: PluginDescriptor
    private let reason: String?
    let models: PyannoteModels?
    let logger: Logger

    init(models: PyannoteModels, logger: Logger) {
        descriptor = Self.descriptor
        reason = nil
        self.models = models
        self.logger = logger
    }

    private init(reason: String, logger: Logger) {
        descriptor = Self.descriptor
        self.reason = reason
        models = nil
        self.logger = logger
    }

    static func unavailable(_ reason: String, logger: Logger) -> PyannoteProvider {
        PyannoteProvider(reason: reason, logger: logger)
    }

    static let descriptor = PluginDescriptor(
        id: PyannotePlugin.providerID,
        name: "pyannote segmentation-3.0 + CAM++ (overlap-aware streaming, diart's design)",
        version: "1.0.0",
        description: "Every step (1 s by default) pyannote segmentation-3.0 looks at the last 5 s and finds up to three "
            + "local speakers, overlap included; each gets a 3D-Speaker CAM++ embedding of the audio where it talks; "
            + "an incremental clustering gives a window's local speakers distinct global speakers (enrolled people "
            + "included). Turns may overlap, so words said at once get their own speakers. At finalize one clustering "
            + "over every window's embeddings revises all turns.",
        latencyClass: SPEAKERSYNC_LATENCY_NEAR_REALTIME,
        licence: "Apache-2.0 (SpeakerSync, sherpa-onnx, 3D-Speaker CAM++) AND MIT (pyannote segmentation-3.0, onnxruntime)",
        requirements: "vendor/models/pyannote-segmentation-3.0.onnx and campplus-zh-en-common-advanced.onnx, and vendor/sherpa-onnx, "
            + "as scripts/setup installs them from PyPI (SPEAKERSYNC_MODELS and SPEAKERSYNC_SHERPA_LIB point elsewhere)",
        measured: PyannoteMeasurements.text)

    func unavailableReason() -> String? { reason }

    func checkOptions(_ optionsJSON: String?) throws(PluginFailure) {
        _ = try options(optionsJSON)
    }

    /// The session's pipeline rules: CAM++'s calibrated values, then the session's options.
    func options(_ json: String?) throws(PluginFailure) -> (config: OverlapDiarizerConfig, hint: SpeakerCountHint) {
        let options: DiarizerOptions
        do throws(OptionsError) {
            options = try DiarizerOptions(json: json, base: .default, extraKeys: Self.optionKeys)
        } catch {
            throw PluginFailure(.invalidArgument, error.message)
        }
        // speakerkit's own options parse above but mean nothing here: refuse them by name.
        if let json, let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
           let foreign = object.keys.sorted().first(where: { !Self.sharedKeys.contains($0) && Self.optionKeys[$0] == nil }) {
            let known = (Self.sharedKeys.sorted() + Self.optionKeys.keys.sorted()).joined(separator: ", ")
            throw PluginFailure(.invalidArgument, "option '\(foreign)' is speakerkit's, not pyannote's (pyannote takes: \(known))")
        }
        var config = OverlapDiarizerConfig.campPlus
        let extra = options.extra
        if let step = extra["step_seconds"] { config.stepSeconds = step }
        if let window = extra["segmentation_window_seconds"] { config.windowSeconds = window }
        if let value = extra["new_speaker_distance"] { config.newSpeakerDistance = Float(value) }
        if let value = extra["final_distance"] { config.finalDistance = Float(value) }
        if let value = extra["min_cluster_seconds"] { config.minimumClusterSeconds = value }
        if extra["final_pass"] == 0 { config.finalMaximumSeconds = 0 }
        if json?.contains("enrolled_speaker_threshold") == true { config.enrolledDistance = options.config.enrolledSpeakerThreshold }
        guard config.stepSeconds <= config.windowSeconds else {
            throw PluginFailure(.invalidArgument, "step_seconds (\(config.stepSeconds)) must not exceed segmentation_window_seconds (\(config.windowSeconds))")
        }
        return (config, options.hint)
    }

    func makeSession(_ request: PluginSessionRequest) throws(PluginFailure) -> any PluginProviderSession {
        guard reason == nil, let models else { throw PluginFailure(.unavailable, reason ?? "not loaded") }
        let (config, hint) = try options(request.optionsJSON)
        let extractor = try loadedExtractor(models)
        // Profiles from another provider's embedding space cannot be compared with this one's.
        let known = request.knownSpeakers.filter { $0.embedding.count == extractor.dimension }
            .map { (speaker: $0.speaker, embedding: $0.embedding, seconds: $0.seconds) }
        var logger = logger
        logger[metadataKey: "session"] = "\(request.sessionID)"
        let diarizer = OverlapDiarizer(config: config, hint: hint, segmenter: models.segmenters, embedder: SherpaOnnxEmbedder(extractor: extractor),
                                       known: known, logger: logger)
        return PyannoteSession(diarizer: diarizer)
    }

    var embedsVoices: Bool { reason == nil }

    private func loadedExtractor(_ models: PyannoteModels) throws(PluginFailure) -> SpeakerEmbeddingExtractor {
        do throws(PyannoteModelsUnavailable) {
            return try models.loaded()
        } catch {
            logger.error("cannot open the models", metadata: ["provider": "\(PyannotePlugin.providerID)", "reason": "\(error.message)"])
            throw PluginFailure(.unavailable, error.message)
        }
    }

    func embedVoice(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) -> [Float] {
        guard reason == nil, let models else { throw PluginFailure(.unavailable, reason ?? "not loaded") }
        let extractor = try loadedExtractor(models)
        do {
            return try extractor.embed(samples)
        } catch {
            throw PluginFailure(error.code == .invalidAudio ? .invalidArgument : .internalError, "embed_voice: \(error.message)")
        }
    }
}
