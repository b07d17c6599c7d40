import CSpeakerSyncPluginABI
import Foundation
import Logging
import SpeakerEmbedding
import SpeakerManager
import VoiceActivity

// The ABI glue of the "speakerkit" provider: entry table, factory, descriptor and instance vtable.
// Every function here is a C function pointer (closures without captures); plugin state lives in
// SpeakerKitRuntime.shared (process-wide) and in each instance's SpeakerKitSession.

/// A C string with static lifetime, for the descriptor.
private func staticCString(_ text: String) -> UnsafePointer<CChar> { UnsafePointer(strdup(text)!) }

private nonisolated(unsafe) let descriptor: UnsafeMutablePointer<speakersync_provider_descriptor_t> = {
    let table = UnsafeMutablePointer<speakersync_provider_descriptor_t>.allocate(capacity: 1)
    table.initialize(to: speakersync_provider_descriptor_t(
        struct_size: UInt32(MemoryLayout<speakersync_provider_descriptor_t>.size),
        id: staticCString("speakerkit"),
        name: staticCString("SpeakerKit (silero VAD + GE2E embeddings + SpeakerManager)"),
        version: staticCString("1.0.0"),
        description: staticCString(
            "Streaming diarization: silero VAD (sherpa-onnx), GE2E speaker embeddings (resemblyzer weights) of "
                + "1.5 s windows every 0.5 s of speech, FluidAudio-style SpeakerManager tracking; turns within about "
                + "a second, offline re-clustering at finalize. One speaker at a time (overlap is not separated)."),
        latency_class: SPEAKERSYNC_LATENCY_REALTIME.rawValue,
        licence: staticCString("MIT AND Apache-2.0 AND MIT"),
        requirements: staticCString(
            "vendor/ as scripts/setup makes it from PyPI: sherpa-onnx's C library with onnxruntime, the silero VAD model, "
                + "the GE2E weights (SPEAKERSYNC_SHERPA_LIB and SPEAKERSYNC_MODELS point elsewhere)"),
        measured: staticCString(
            "DER (collar 0.25) synthetic 2 / 3 / 4 voices 3.3 / 4.2 / 3.4 %, ami-dev 25.0 %, sample 10.0 %; "
                + "0.0115 CPU s per audio s on one core; 100 real-time sessions on 2 cores with words back in 13 ms p99 "
                + "(speakersync eval, speakersync-bench sessions; docs/accuracy.md, docs/benchmarks.md)")))
    return table
}()

private func instanceSession(_ instance: UnsafePointer<speakersync_instance_t>?) -> SpeakerKitSession? {
    guard let data = instance?.pointee.instance_data else { return nil }
    return Unmanaged<SpeakerKitSession>.fromOpaque(data).takeUnretainedValue()
}

private func writeError(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ message: String) {
    guard let buffer, size > 0 else { return }
    let bytes = Array(message.utf8.prefix(size - 1))
    for (index, byte) in bytes.enumerated() { buffer[index] = CChar(bitPattern: byte) }
    buffer[bytes.count] = 0
}

private func knownSpeakers(_ config: UnsafePointer<speakersync_instance_config_t>) -> [Speaker] {
    let hasKnown = Int(config.pointee.struct_size) >= MemoryLayout<speakersync_instance_config_t>.offset(of: \.known_speaker_count)! + MemoryLayout<Int>.size
    guard hasKnown, let array = config.pointee.known_speakers else { return [] }
    let now = Date()
    return (0 ..< config.pointee.known_speaker_count).compactMap { index -> Speaker? in
        let known = array[index]
        guard let embedding = known.embedding, known.dimension == UInt32(SpeakerEncoder.embeddingSize), known.speaker >= 0 else { return nil }
        let vector = Array(UnsafeBufferPointer(start: embedding, count: Int(known.dimension)))
        guard vector.allSatisfy(\.isFinite) else { return nil }
        return Speaker(
            id: String(known.speaker), name: known.name.map { String(cString: $0) }, currentEmbedding: vector,
            durationSeconds: max(0, known.duration_seconds), createdAt: now,
            isPermanent: known.flags & SPEAKERSYNC_KNOWN_PERMANENT != 0)
    }
}

private let create: @convention(c) (UnsafePointer<speakersync_factory_t>?, UnsafePointer<speakersync_instance_config_t>?, UnsafeMutablePointer<CChar>?, Int) -> UnsafeMutablePointer<speakersync_instance_t>? = { _, config, errorBuffer, errorSize in
    guard let config, Int(config.pointee.struct_size) >= MemoryLayout<speakersync_instance_config_t>.offset(of: \.known_speakers)! else {
        writeError(errorBuffer, errorSize, "instance config missing or too small")
        return nil
    }
    guard config.pointee.sample_rate == SPEAKERSYNC_SAMPLE_RATE else {
        writeError(errorBuffer, errorSize, "sample_rate \(config.pointee.sample_rate) is not supported (only 16000)")
        return nil
    }
    guard let runtime = SpeakerKitRuntime.shared.withLock({ $0 }) else {
        writeError(errorBuffer, errorSize, "speakerkit is not initialised")
        return nil
    }
    let options: SpeakerKitOptions
    do throws(OptionsError) {
        options = try SpeakerKitOptions(json: config.pointee.options_json.map { String(cString: $0) })
    } catch {
        writeError(errorBuffer, errorSize, "invalid options: \(error.message)")
        return nil
    }
    let sessionID = config.pointee.session_id.map { String(cString: $0) } ?? ""
    let known = knownSpeakers(config)
    let session: SpeakerKitSession
    do {
        session = try SpeakerKitSession(runtime: runtime, options: options, known: known, sessionID: sessionID)
    } catch {
        writeError(errorBuffer, errorSize, "cannot start: \(error)")
        return nil
    }
    let instance = UnsafeMutablePointer<speakersync_instance_t>.allocate(capacity: 1)
    instance.initialize(to: speakersync_instance_t(
        struct_size: UInt32(MemoryLayout<speakersync_instance_t>.size),
        instance_data: Unmanaged.passRetained(session).toOpaque(),
        push_audio: { instance, samples, count in
            guard let session = instanceSession(instance) else { return SPEAKERSYNC_ERR_INVALID_ARGUMENT }
            guard count > 0 else { return SPEAKERSYNC_OK }
            guard let samples else {
                session.setError("push_audio: samples is NULL")
                return SPEAKERSYNC_ERR_INVALID_ARGUMENT
            }
            return session.push(UnsafeBufferPointer(start: samples, count: count))
        },
        pull_turns: { instance, out, capacity, written in
            guard let session = instanceSession(instance) else { return SPEAKERSYNC_ERR_INVALID_ARGUMENT }
            guard let written, out != nil || capacity == 0 else {
                session.setError("pull_turns: NULL out or written")
                return SPEAKERSYNC_ERR_INVALID_ARGUMENT
            }
            return session.pull(into: out, capacity: capacity, written: written)
        },
        finalize: { instance in
            instanceSession(instance)?.finalize() ?? SPEAKERSYNC_ERR_INVALID_ARGUMENT
        },
        last_error: { instance in
            UnsafePointer(instanceSession(instance)?.lastError ?? UnsafeMutablePointer(mutating: staticCString("instance is NULL")))
        },
        destroy: { instance in
            guard let instance else { return }
            if let data = instance.pointee.instance_data { Unmanaged<SpeakerKitSession>.fromOpaque(data).release() }
            instance.deinitialize(count: 1)
            instance.deallocate()
        },
        speaker_profile: { instance, speaker, out, capacity, dimension, duration in
            guard let session = instanceSession(instance) else { return SPEAKERSYNC_ERR_INVALID_ARGUMENT }
            return session.profile(speaker: speaker, out: out, capacity: capacity, dimension: dimension, duration: duration)
        }))
    runtime.logger.debug("session started", metadata: [
        "session": "\(sessionID)", "known_speakers": "\(known.count)",
        "hint": "\(options.hint.exact.map(String.init) ?? "-")/\(options.hint.minimum.map(String.init) ?? "-")/\(options.hint.maximum.map(String.init) ?? "-")",
    ])
    return instance
}

private let embedVoice: @convention(c) (UnsafePointer<speakersync_factory_t>?, UnsafePointer<Float>?, Int, UnsafeMutablePointer<Float>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<CChar>?, Int) -> speakersync_status_t = { _, samples, count, out, capacity, dimension, errorBuffer, errorSize in
    guard let runtime = SpeakerKitRuntime.shared.withLock({ $0 }) else {
        writeError(errorBuffer, errorSize, "speakerkit is not initialised")
        return SPEAKERSYNC_ERR_BAD_STATE
    }
    guard let samples, count > 0, let out, let dimension, capacity >= SpeakerEncoder.embeddingSize else {
        writeError(errorBuffer, errorSize, "embed_voice: missing audio or output buffer")
        return SPEAKERSYNC_ERR_INVALID_ARGUMENT
    }
    let audio = Array(UnsafeBufferPointer(start: samples, count: count))
    guard audio.allSatisfy(\.isFinite) else {
        writeError(errorBuffer, errorSize, "embed_voice: the audio has non-finite samples")
        return SPEAKERSYNC_ERR_INVALID_ARGUMENT
    }
    do {
        // Keep only the speech (the VAD's regions), so pauses do not dilute the voice.
        let detector = try runtime.takeDetector()
        defer { runtime.giveBack(detector) }
        detector.accept(samples: audio)
        detector.flush()
        var speech: [Float] = []
        for segment in detector.popSegments() {
            let lower = max(0, Int(segment.startSeconds * 16_000)), upper = min(audio.count, Int(segment.endSeconds * 16_000))
            if upper > lower { speech += audio[lower ..< upper] }
        }
        guard Double(speech.count) / 16_000 >= 1.0 else {
            writeError(errorBuffer, errorSize, String(format: "embed_voice: %.1f s of speech found; at least 1 s is needed (3 to 10 s works best)", Double(speech.count) / 16_000))
            return SPEAKERSYNC_ERR_INVALID_ARGUMENT
        }
        let embedding = try runtime.encoder.embedUtterance(samples: speech, sampleRate: 16_000).embedding
        for (index, value) in embedding.enumerated() { out[index] = value }
        dimension.pointee = embedding.count
        return SPEAKERSYNC_OK
    } catch {
        writeError(errorBuffer, errorSize, "embed_voice: \(error)")
        return SPEAKERSYNC_ERR_INTERNAL
    }
}

private nonisolated(unsafe) let factory: UnsafeMutablePointer<speakersync_factory_t> = {
    let table = UnsafeMutablePointer<speakersync_factory_t>.allocate(capacity: 1)
    table.initialize(to: speakersync_factory_t(
        struct_size: UInt32(MemoryLayout<speakersync_factory_t>.size),
        factory_data: nil,
        describe: { _ in UnsafePointer(descriptor) },
        create: create,
        embed_voice: embedVoice,
        check_options: { _, options, errorBuffer, errorSize in
            do throws(OptionsError) {
                _ = try SpeakerKitOptions(json: options.map { String(cString: $0) })
                return SPEAKERSYNC_OK
            } catch {
                writeError(errorBuffer, errorSize, error.message)
                return SPEAKERSYNC_ERR_INVALID_ARGUMENT
            }
        },
        availability: nil))
    return table
}()

private nonisolated(unsafe) let entry: UnsafeMutablePointer<speakersync_plugin_entry_t> = {
    let table = UnsafeMutablePointer<speakersync_plugin_entry_t>.allocate(capacity: 1)
    table.initialize(to: speakersync_plugin_entry_t(
        struct_size: UInt32(MemoryLayout<speakersync_plugin_entry_t>.size),
        abi_version: SPEAKERSYNC_PLUGIN_ABI_VERSION,
        init: { host in
            guard let host else { return SPEAKERSYNC_ERR_INVALID_ARGUMENT }
            do {
                let runtime = try SpeakerKitRuntime(host: host)
                SpeakerKitRuntime.shared.withLock { $0 = runtime }
                return SPEAKERSYNC_OK
            } catch {
                "speakerkit: cannot load its models: \(error) (run scripts/setup to install vendor/)".withCString {
                    host.pointee.log(host, Int32(SPEAKERSYNC_LOG_ERROR.rawValue), $0)
                }
                return SPEAKERSYNC_ERR_UNSUPPORTED
            }
        },
        deinit: { SpeakerKitRuntime.shared.withLock { $0 = nil } },
        get_factory_count: { 1 },
        get_factory: { index in index == 0 ? UnsafePointer(factory) : nil }))
    return table
}()

/// The one exported symbol: the static entry table (built once, on first call).
@_cdecl("speakersync_plugin_entry")
public func speakersyncPluginEntry() -> UnsafePointer<speakersync_plugin_entry_t> {
    UnsafePointer(entry)
}
