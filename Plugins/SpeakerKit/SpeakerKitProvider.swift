import CSpeakerSyncPluginABI
import DiarizationModels
import Foundation
import ProviderPluginKit
import SherpaOnnxSpeakers
import SpeakerEmbedding
import SpeakerManager
import StreamingDiarization
import VoiceActivity

/// A speakerkit provider: silero VAD, speaker embeddings, SpeakerManager, offline re-clustering at
/// finalize (docs/speakerkit.md). `speakerkit` embeds with GE2E (no configuration needed);
/// `speakerkit.NAME` with an operator's sherpa-onnx embedding model and that model's thresholds
/// (`SpeakerKitModels`). The C glue is ProviderPluginKit's.
final class SpeakerKitProvider: PluginProvider {
    /// Which embeddings the provider's sessions compute.
    enum Embedding: Sendable {
        case ge2e
        /// The model is opened by its first session or enrolment (`LazyEmbeddingExtractor`).
        case model(SherpaOnnxModelCatalog.EmbeddingModel, LazyEmbeddingExtractor)
    }

    let runtime: SpeakerKitRuntime
    let embedding: Embedding
    let descriptor: PluginDescriptor
    /// The diarizer's defaults: GE2E's, or the model's calibrated thresholds.
    let baseConfig: DiarizerConfig

    /// `speakerkit`: GE2E.
    init(runtime: SpeakerKitRuntime) {
        self.runtime = runtime
        embedding = .ge2e
        descriptor = Self.ge2eDescriptor
        baseConfig = .default
    }

    /// `speakerkit.NAME`: a sherpa-onnx embedding model, configured by the operator or the vendored CAM++.
    init(runtime: SpeakerKitRuntime, model: SherpaOnnxModelCatalog.EmbeddingModel, extractor: LazyEmbeddingExtractor, vendored: Bool = false) {
        self.runtime = runtime
        embedding = .model(model, extractor)
        descriptor = vendored ? Self.vendoredDescriptor(model, dimension: extractor.dimension) : Self.modelDescriptor(model, dimension: extractor.dimension)
        baseConfig = EmbeddingModelThresholds.diarizerConfig(model.thresholds)
    }

    var dimension: Int {
        switch embedding {
        case .ge2e: SpeakerEncoder.embeddingSize
        case .model(_, let extractor): extractor.dimension
        }
    }

    /// The sessions' embedder; opens the model the first time (`.unavailable` when it cannot be opened).
    func embedder() throws(PluginFailure) -> any SpeakerEmbedder {
        switch embedding {
        case .ge2e: return GE2EEmbedder(encoder: runtime.encoder)
        case .model(_, let lazy): return SherpaOnnxEmbedder(extractor: try opened(lazy))
        }
    }

    private func opened(_ lazy: LazyEmbeddingExtractor) throws(PluginFailure) -> SpeakerEmbeddingExtractor {
        do throws(SherpaOnnxSpeakersError) {
            return try lazy.loaded()
        } catch {
            runtime.logger.error("cannot open the embedding model", metadata: ["provider": "\(descriptor.id)", "reason": "\(error.message)"])
            throw PluginFailure(.unavailable, "cannot open the embedding model: \(error.message)")
        }
    }

    static let ge2eDescriptor = PluginDescriptor(
        id: "speakerkit",
        name: "SpeakerKit (silero VAD + GE2E embeddings + SpeakerManager)",
        version: "1.0.0",
        description: "Streaming diarization: silero VAD (onnxruntime, batched across sessions), GE2E speaker embeddings (resemblyzer weights) of "
            + "1.5 s windows every 0.5 s of speech, FluidAudio-style SpeakerManager tracking; turns within about "
            + "a second, offline re-clustering at finalize; then pyannote segmentation-3.0 (10 s windows, segmented as the audio "
            + "arrives) adds the overlapped speech of the people the turns found (option overlap: false turns that off).",
        latencyClass: SPEAKERSYNC_LATENCY_REALTIME,
        licence: "MIT AND Apache-2.0 AND MIT",
        requirements: "vendor/ as scripts/setup makes it from PyPI: sherpa-onnx's C library with onnxruntime, the silero VAD model, "
            + "the GE2E weights (SPEAKERSYNC_SHERPA_LIB and SPEAKERSYNC_MODELS point elsewhere)",
        // Written by scripts/publish-figures from its measurements (never by hand).
        measured: SpeakerKitMeasured.summary)

    static func modelDescriptor(_ model: SherpaOnnxModelCatalog.EmbeddingModel, dimension: Int) -> PluginDescriptor {
        let file = URL(fileURLWithPath: model.path).lastPathComponent
        let calibrated = model.thresholds.isEmpty
            ? "thresholds: the defaults for margin-loss models (not calibrated for this model: speakersync-bench calibrate)"
            : "thresholds calibrated for this model: " + model.thresholds.keys.sorted().map { "\($0) \(model.thresholds[$0]!)" }.joined(separator: ", ")
        return PluginDescriptor(
            id: "speakerkit.\(model.name)",
            name: "SpeakerKit with the '\(model.name)' embedding model (silero VAD + sherpa-onnx embeddings + SpeakerManager)",
            version: "1.0.0",
            description: "speakerkit's streaming diarization with the operator's sherpa-onnx embedding model \(file) "
                + "(\(dimension) dimensions) in place of GE2E; \(calibrated). Turns within about a second, offline "
                + "re-clustering at finalize, overlapped speech added as in speakerkit.",
            latencyClass: SPEAKERSYNC_LATENCY_REALTIME,
            licence: "MIT AND Apache-2.0 (SpeakerSync, sherpa-onnx, silero VAD) AND the embedding model's own (3D-Speaker Apache-2.0, "
                + "WeSpeaker Apache-2.0 with CC-BY-4.0 VoxCeleb weights, NeMo TitaNet CC-BY-4.0)",
            requirements: "the model in the 'speakerkit' section of serve --provider-config (embedding_models), or "
                + "\(SherpaOnnxModelCatalog.embeddingVariable); vendor/ from scripts/setup",
            measured: "not measured for this operator's model here: run speakersync eval --provider speakerkit.\(model.name) "
                + "(docs/accuracy.md has the figures for the models this project measured)")
    }

    /// `speakerkit.campplus` with no configuration: the CAM++ that scripts/setup vendors, its thresholds
    /// calibrated here (`VendoredCampPlus`).
    static func vendoredDescriptor(_ model: SherpaOnnxModelCatalog.EmbeddingModel, dimension: Int) -> PluginDescriptor {
        PluginDescriptor(
            id: "speakerkit.\(model.name)",
            name: "SpeakerKit with 3D-Speaker CAM++ embeddings (silero VAD + CAM++ + SpeakerManager)",
            version: "1.0.0",
            description: "speakerkit's streaming diarization with 3D-Speaker CAM++ (zh/en common advanced, \(dimension) dimensions; the "
                + "model scripts/setup vendors) in place of GE2E, its thresholds calibrated on calibration meetings only: "
                + model.thresholds.keys.sorted().map { "\($0) \(model.thresholds[$0]!)" }.joined(separator: ", ")
                + ". Separates real voices better than GE2E (window EER on ami-dev 5.3 against 23.6 %), yet is less accurate on "
                + "synthetic voices, and since the default's overlap pass gives a voice heard only over others a speaker of its own "
                + "also on ami-dev; its CPU cost is higher (measured, beside speakerkit's, below), so it is offered by name beside the default.",
            latencyClass: SPEAKERSYNC_LATENCY_REALTIME,
            licence: "MIT AND Apache-2.0 (SpeakerSync, sherpa-onnx, silero VAD, 3D-Speaker CAM++)",
            requirements: "vendor/models/\(VendoredCampPlus.fileName) and vendor/sherpa-onnx, as scripts/setup makes them from PyPI "
                + "(an operator's own embedding model named '\(model.name)' takes its place)",
            // Written by scripts/publish-figures from its measurements (never by hand); docs/accuracy.md,
            // "speakerkit.campplus out of the box", has how its settings were chosen and the report sets.
            measured: SpeakerKitMeasured.campplusSummary)
    }

    /// speakerkit's own option: `overlap` (true or 1, the default; false or 0 turns the pass off).
    static let extraKeys: [String: ClosedRange<Double>] = ["overlap": 0 ... 1]

    func checkOptions(_ optionsJSON: String?) throws(PluginFailure) {
        do throws(OptionsError) {
            _ = try DiarizerOptions(json: optionsJSON, base: baseConfig, extraKeys: Self.extraKeys)
        } catch {
            throw PluginFailure(.invalidArgument, error.message)
        }
    }

    func makeSession(_ request: PluginSessionRequest) throws(PluginFailure) -> any PluginProviderSession {
        let options: DiarizerOptions
        do throws(OptionsError) {
            options = try DiarizerOptions(json: request.optionsJSON, base: baseConfig, extraKeys: Self.extraKeys)
        } catch {
            throw PluginFailure(.invalidArgument, "invalid options: \(error.message)")
        }
        let now = Date()
        let known = request.knownSpeakers.compactMap { known -> Speaker? in
            // Profiles from another provider's embedding space cannot be compared with this one's.
            guard known.embedding.count == dimension else { return nil }
            return Speaker(id: String(known.speaker), name: known.name, currentEmbedding: known.embedding,
                           durationSeconds: known.seconds, createdAt: now, isPermanent: known.isPermanent)
        }
        let embedder = try embedder()
        do {
            let overlap = (options.extra["overlap"] ?? 1) != 0 ? runtime.segmenter : nil
            let session = try SpeakerKitSession(runtime: runtime, embedder: embedder, options: options, known: known, sessionID: request.sessionID,
                                                segmenter: overlap)
            runtime.logger.debug("session started", metadata: [
                "session": "\(request.sessionID)", "known_speakers": "\(known.count)", "overlap": "\(overlap != nil)",
                "hint": "\(options.hint.exact.map(String.init) ?? "-")/\(options.hint.minimum.map(String.init) ?? "-")/\(options.hint.maximum.map(String.init) ?? "-")",
            ])
            return session
        } catch {
            throw PluginFailure(.internalError, "cannot start: \(error)")
        }
    }

    var embedsVoices: Bool { true }

    /// Sessions pushed together share one silero call per 32 ms step (`SileroBatch`) and one encoder
    /// call for all their due windows (`SpeakerKitSession.push(together:)`): the worker hands over
    /// whatever pushes queued up while it was busy. The VAD's cost per window falls by more than half
    /// at batch 32; since frames are embedded one at a time (`DiarizerConfig.minimumBatch`), the
    /// encoder's by about a third. Labels are exactly those of the sessions alone
    /// (SpeakerKitBatchedPushTests, BatchedSpeakerKitTests).
    var batchesPushes: Bool { true }

    func push(many: [(session: any PluginProviderSession, samples: UnsafeBufferPointer<Float>)]) -> [PluginFailure?] {
        let sessions = many.compactMap { $0.session as? SpeakerKitSession }
        guard sessions.count == many.count else {
            return many.map { _ in PluginFailure(.internalError, "push_audio_many: an instance of another provider") }
        }
        SileroBatch.prefetch(zip(sessions, many).map { ($0.detector, $1.samples) })
        // The ABI lists each instance once, all of this factory (so all with this provider's embedder);
        // a host that broke the first rule gets the pushes one after another, in order.
        guard Set(sessions.map(ObjectIdentifier.init)).count == sessions.count else { return pushEach(many) }
        let embedder: any SpeakerEmbedder
        do throws(PluginFailure) {
            // Opened already: these sessions were started with it.
            embedder = try self.embedder()
        } catch {
            return many.map { _ in error }
        }
        return SpeakerKitSession.push(together: zip(sessions, many).map { ($0, $1.samples) }, embedder: embedder)
    }

    func embedVoice(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) -> [Float] {
        let speech: [Float]
        do {
            speech = try runtime.detectors.enrolmentSpeech(in: samples)
        } catch {
            throw PluginFailure(error.isTooShort ? .invalidArgument : .internalError, "embed_voice: \(error.message)")
        }
        let extractor: SpeakerEmbeddingExtractor?
        switch embedding {
        case .ge2e: extractor = nil
        case .model(_, let lazy): extractor = try opened(lazy)
        }
        do {
            if let extractor { return try extractor.embed(speech) }
            return try runtime.encoder.embedUtterance(samples: speech, sampleRate: 16_000).embedding
        } catch {
            throw PluginFailure(.internalError, "embed_voice: \(error)")
        }
    }
}

/// The one exported symbol: the static entry table.
@_cdecl("speakersync_plugin_entry")
public func speakersyncPluginEntry() -> UnsafePointer<speakersync_plugin_entry_t> {
    PluginEntryTables.entry(name: "speakerkit") { host in
        do {
            let runtime = try SpeakerKitRuntime(logger: host.logger, backlogSeconds: { host.backlogSeconds() })
            return [SpeakerKitProvider(runtime: runtime)] + SpeakerKitModels.providers(runtime: runtime, host: host)
        } catch {
            throw PluginFailure(.unsupported, "cannot load its models: \(error) (run scripts/setup to install vendor/)")
        }
    }
}
