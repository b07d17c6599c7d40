import CSpeakerSyncPluginABI
import DiarizationModels
import Foundation
import Logging
import ProviderPluginKit
import SherpaOnnxSpeakers
import SpeakerManager
import StreamingDiarization

/// One `sherpa-onnx` provider: the operator's segmentation model with one of their embedding models.
/// Live, turns come from the silero VAD, this model's embeddings and the SpeakerManager (the
/// `StreamingDiarizer` speakerkit runs, with another embedder); at finalize sherpa-onnx's offline,
/// overlap-aware diarization re-labels the whole session (`SherpaOnnxSession`).
final class SherpaOnnxProvider: PluginProvider {
    /// The options this provider takes beyond the diarizer's: the offline pass's clustering.
    static let offlineOptionKeys: [String: ClosedRange<Double>] = [
        "offline_threshold": 0.01 ... 2, "min_segment_seconds": 0 ... 5, "merge_gap_seconds": 0 ... 5, "offline_pass": 0 ... 1, "prefer_live_count": 0 ... 1, "offline_max_seconds": 10 ... 14_400,
    ]

    let descriptor: PluginDescriptor
    private let reason: String?
    let model: SherpaOnnxModelCatalog.EmbeddingModel?
    let extractor: SpeakerEmbeddingExtractor?
    let offline: OfflineDiarizerPool?
    let detectors: SpeechDetectorPool?
    let logger: Logger
    let baseConfig: DiarizerConfig

    init(id: String, model: SherpaOnnxModelCatalog.EmbeddingModel, extractor: SpeakerEmbeddingExtractor, offline: OfflineDiarizerPool,
         detectors: SpeechDetectorPool, logger: Logger) {
        self.descriptor = Self.descriptor(id: id, model: model, dimension: extractor.dimension)
        self.reason = nil
        self.model = model
        self.extractor = extractor
        self.offline = offline
        self.detectors = detectors
        self.logger = logger
        var config = EmbeddingModelThresholds.diarizerConfig(model.thresholds)
        // Live re-clustering was calibrated for speakerkit's pipeline (GE2E, CAM++), whose finalize is that
        // same pass; here finalize is sherpa-onnx's own offline diarization. Off unless a session asks.
        config.liveReclusterSeconds = 0
        self.baseConfig = config
    }

    private init(id: String, model: SherpaOnnxModelCatalog.EmbeddingModel?, reason: String, logger: Logger) {
        self.descriptor = Self.descriptor(id: id, model: model, dimension: nil)
        self.reason = reason
        self.model = model
        self.extractor = nil
        self.offline = nil
        self.detectors = nil
        self.logger = logger
        self.baseConfig = .default
    }

    /// A provider that loads but cannot serve: listed with `reason`, its sessions refused with it.
    static func unavailable(_ reason: String, id: String = SherpaOnnxPlugin.providerID, model: SherpaOnnxModelCatalog.EmbeddingModel? = nil,
                            logger: Logger) -> SherpaOnnxProvider {
        SherpaOnnxProvider(id: id, model: model, reason: reason, logger: logger)
    }

    static func descriptor(id: String, model: SherpaOnnxModelCatalog.EmbeddingModel?, dimension: Int?) -> PluginDescriptor {
        let modelText = model.map { "embedding model '\($0.name)' (\(URL(fileURLWithPath: $0.path).lastPathComponent)\(dimension.map { ", \($0) dimensions" } ?? ""))" }
            ?? "the operator's embedding model"
        return PluginDescriptor(
            id: id,
            name: "sherpa-onnx (pyannote segmentation + \(model?.name ?? "speaker embeddings") + fast clustering)",
            version: "1.0.0",
            description: "sherpa-onnx 2.0.1's speaker APIs with \(modelText): live turns within about a second from the "
                + "silero VAD, this model's embeddings and SpeakerManager tracking; at finalize one overlap-aware offline pass "
                + "(pyannote segmentation-3.0, an embedding per segment, clustering by num_speakers or offline_threshold) "
                + "revises every turn (unless it finds fewer speakers than the live result), speakers keeping their live labels by overlap. Choose the model by provider id "
                + "(sherpa-onnx.NAME).",
            latencyClass: SPEAKERSYNC_LATENCY_NEAR_REALTIME,
            licence: "Apache-2.0 (sherpa-onnx) AND MIT (onnxruntime, silero VAD) AND the models' own: pyannote segmentation-3.0 "
                + "MIT, 3D-Speaker Apache-2.0, WeSpeaker Apache-2.0 (CC-BY-4.0 for VoxCeleb-trained weights), NeMo TitaNet CC-BY-4.0",
            requirements: "a pyannote segmentation ONNX model (\(SherpaOnnxModelCatalog.segmentationVariable)) and a speaker embedding ONNX "
                + "model (\(SherpaOnnxModelCatalog.embeddingVariable)), or the 'sherpa-onnx' section of serve --provider-config; "
                + "sherpa-onnx's release page 'speaker-segmentation-models' and 'speaker-recongition-models' "
                + "(docs/sherpa-onnx.md); vendor/ from scripts/setup",
            measured: SherpaOnnxMeasurements.text)
    }

    func unavailableReason() -> String? { reason }

    func checkOptions(_ optionsJSON: String?) throws(PluginFailure) {
        _ = try options(optionsJSON)
    }

    func options(_ json: String?) throws(PluginFailure) -> DiarizerOptions {
        do throws(OptionsError) {
            return try DiarizerOptions(json: json, base: baseConfig, extraKeys: Self.offlineOptionKeys)
        } catch {
            throw PluginFailure(.invalidArgument, error.message)
        }
    }

    func makeSession(_ request: PluginSessionRequest) throws(PluginFailure) -> any PluginProviderSession {
        guard reason == nil, let extractor, let offline, let detectors else {
            throw PluginFailure(.unavailable, reason ?? "not loaded")
        }
        let options = try options(request.optionsJSON)
        let now = Date()
        let known = request.knownSpeakers.compactMap { known -> Speaker? in
            guard known.embedding.count == extractor.dimension else { return nil }
            return Speaker(id: String(known.speaker), name: known.name, currentEmbedding: known.embedding,
                           durationSeconds: known.seconds, createdAt: now, isPermanent: known.isPermanent)
        }
        do {
            return try SherpaOnnxSession(
                sessionID: request.sessionID, options: options, offlineThreshold: EmbeddingModelThresholds.value("offline", in: model?.thresholds ?? [:]),
                known: known, extractor: extractor, offline: offline, detectors: detectors, logger: logger)
        } catch {
            throw PluginFailure(.internalError, "cannot start: \(error)")
        }
    }

    var embedsVoices: Bool { reason == nil }

    func embedVoice(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) -> [Float] {
        guard reason == nil, let extractor, let detectors else { throw PluginFailure(.unavailable, reason ?? "not loaded") }
        let speech: [Float]
        do {
            speech = try detectors.enrolmentSpeech(in: samples)
        } catch {
            throw PluginFailure(error.isTooShort ? .invalidArgument : .internalError, "embed_voice: \(error.message)")
        }
        do {
            return try extractor.embed(speech)
        } catch {
            throw PluginFailure(.internalError, "embed_voice: \(error.message)")
        }
    }
}
