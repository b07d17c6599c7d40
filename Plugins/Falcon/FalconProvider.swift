import CSpeakerSyncPluginABI
import Foundation
import Logging
import PicovoiceFalcon
import ProviderPluginKit

/// The `falcon` provider: sessions share the plugin's engines (each engine one activation).
final class FalconProvider: PluginProvider {
    let descriptor: PluginDescriptor
    private let reason: String?
    private let engines: FalconEnginePool?
    private let logger: Logger

    init(engines: FalconEnginePool, config: FalconConfig, logger: Logger) {
        self.engines = engines
        self.reason = nil
        self.logger = logger
        descriptor = Self.descriptor(version: engines.library.version)
    }

    init(unavailable reason: String, logger: Logger) {
        self.engines = nil
        self.reason = reason
        self.logger = logger
        descriptor = Self.descriptor(version: nil)
    }

    static func descriptor(version: String?) -> PluginDescriptor {
        PluginDescriptor(
            id: FalconPlugin.providerID,
            name: "Picovoice Falcon\(version.map { " \($0)" } ?? "")",
            version: "1.0.0",
            description: "Picovoice Falcon speaker diarization (libpv_falcon). Falcon diarizes whole recordings: live, the latest "
                + "window_seconds (30) are diarized again every step_seconds (5) of audio and speakers keep their labels by overlap "
                + "with the turns already sent, so a turn first arrives 5-10 s after the speech and is revised while it stays in the "
                + "window; at finalize one pass over the whole session revises every turn. No enrolment or known speakers (Falcon "
                + "exposes no voice embeddings).",
            latencyClass: SPEAKERSYNC_LATENCY_NEAR_REALTIME,
            licence: "Picovoice Falcon engine: proprietary, under Picovoice's terms of use (an AccessKey from console.picovoice.ai); "
                + "its Python/C bindings and the pvfalcon package: Apache-2.0",
            requirements: "\(FalconConfig.accessKeyVariable) or 'access_key' in the provider config's 'falcon' section (the key is "
                + "activated online: the server needs internet access); libpv_falcon.so and falcon_params.pv from PyPI pvfalcon 2.0.1, "
                + "installed into vendor/picovoice by scripts/setup",
            measured: "not measurable here: Falcon activates its AccessKey with Picovoice's servers and this machine has no internet "
                + "access; the plugin's windowing, revision and error paths are tested with a test double of the library")
    }

    func unavailableReason() -> String? { reason }

    func checkOptions(_ optionsJSON: String?) throws(PluginFailure) {
        do throws(FalconOptionsError) {
            _ = try FalconOptions(json: optionsJSON)
        } catch {
            throw PluginFailure(.invalidArgument, error.message)
        }
    }

    func makeSession(_ request: PluginSessionRequest) throws(PluginFailure) -> any PluginProviderSession {
        guard reason == nil, let engines else { throw PluginFailure(.unavailable, reason ?? "not loaded") }
        let options: FalconOptions
        do throws(FalconOptionsError) {
            options = try FalconOptions(json: request.optionsJSON)
        } catch {
            throw PluginFailure(.invalidArgument, error.message)
        }
        guard request.sampleRate == engines.library.sampleRate else {
            throw PluginFailure(.invalidArgument, "Falcon takes \(engines.library.sampleRate) Hz audio, not \(request.sampleRate) Hz")
        }
        var logger = logger
        logger[metadataKey: "session"] = "\(request.sessionID)"
        return FalconSession(options: options, engines: engines, logger: logger)
    }
}
