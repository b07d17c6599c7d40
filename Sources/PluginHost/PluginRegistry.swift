#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSpeakerSyncPluginABI
import Foundation
import Logging

/// The diarization providers available to sessions: the built-ins plus every provider of every plugin
/// library in one folder, loaded once at start-up.
///
/// Loading happens in `init` on the calling thread (the ABI's "loader thread"): every `*.so` (and `*.dylib`
/// on macOS) in the folder, in file-name order, is dlopen'd with RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE, checked
/// (entry symbol, struct_size, abi_version), initialised and asked for its factories. Whatever fails is
/// listed in `failures` with a reason and logged; it never stops the others. When two providers share an
/// id, the first loaded wins (built-ins before all plugins).
///
/// The registry is immutable afterwards and safe to share. Libraries stay loaded while the registry or any
/// instance created from it is alive (normally the process lifetime); they are dlclose'd only after both
/// are gone, and even then stay mapped (see `LoadedPlugin`). Choosing the default folder is the integrator's job.
public final class PluginRegistry: Sendable {
    /// Built-ins first, then plugin providers in load order.
    public let providers: [ProviderDescriptor]
    /// Libraries and providers that could not be loaded, in load order.
    public let failures: [PluginLoadFailure]

    private let factories: [String: Factory]
    private let logger: Logger

    /// A plugin factory and the library that must outlive it. Sendable: the table is the plugin's
    /// const, static factory (valid until deinit, which `plugin` postpones), and the ABI lets any thread
    /// call its functions.
    private struct Factory: @unchecked Sendable {
        let plugin: LoadedPlugin
        let table: UnsafePointer<speakersync_factory_t>
    }

    public convenience init(directory: String?, configuration: ProviderConfiguration = .empty, logger: Logger) {
        var failures: [PluginLoadFailure] = []
        let paths = Self.libraryPaths(in: directory, logger: logger, failures: &failures)
        self.init(libraryPaths: paths, earlierFailures: failures, configuration: configuration, logger: logger)
    }

    /// Loads exactly these library files, in this order (a provider worker loads the one file it hosts).
    public convenience init(libraryPaths: [String], configuration: ProviderConfiguration = .empty, logger: Logger) {
        self.init(libraryPaths: libraryPaths, earlierFailures: [], configuration: configuration, logger: logger)
    }

    private init(libraryPaths: [String], earlierFailures: [PluginLoadFailure], configuration: ProviderConfiguration, logger: Logger) {
        self.logger = logger
        var providers = ProviderDescriptor.builtins
        var failures = earlierFailures
        var factories: [String: Factory] = [:]
        var taken = Set(providers.map(\.id))

        for path in libraryPaths {
            let plugin: LoadedPlugin
            do {
                plugin = try LoadedPlugin.shared(path: path, configuration: configuration, logger: logger)
            } catch {
                failures.append(error.failure)
                logger.error(
                    "plugin rejected: \(path): \(error.failure.message)",
                    metadata: ["plugin": "\(path)", "code": "\(error.failure.code.rawValue)"])
                continue
            }
            var offered = 0
            let failuresBefore = failures.count
            for (index, factory) in plugin.factories().enumerated() {
                switch Self.describe(factory, index: index, path: path) {
                case .failure(let failure):
                    failures.append(failure)
                    logger.error("plugin provider rejected: \(path): \(failure.message)", metadata: ["plugin": "\(path)"])
                case .success(let descriptor):
                    guard !taken.contains(descriptor.id) else {
                        let failure = PluginLoadFailure(
                            path: path, code: .duplicateProvider,
                            message: "provider id '\(descriptor.id)' is already provided; the first one wins",
                            providerID: descriptor.id)
                        failures.append(failure)
                        logger.error("plugin provider rejected: \(path): \(failure.message)", metadata: ["plugin": "\(path)"])
                        continue
                    }
                    taken.insert(descriptor.id)
                    providers.append(descriptor)
                    factories[descriptor.id] = Factory(plugin: plugin, table: factory!)
                    offered += 1
                    logger.info(
                        "loaded diarization provider",
                        metadata: ["provider": "\(descriptor.id)", "version": "\(descriptor.version)", "plugin": "\(path)"])
                }
            }
            if offered == 0 {
                // Nothing references `plugin` any more: its deinit calls deinit() and dlclose.
                if failures.count > failuresBefore { continue }  // the reasons are listed already
                failures.append(PluginLoadFailure(path: path, code: .noProviders, message: "the plugin offers no usable provider"))
                logger.error("plugin rejected: \(path): no usable provider", metadata: ["plugin": "\(path)"])
            }
        }
        self.providers = providers
        self.failures = failures
        self.factories = factories
    }

    /// The provider with this id, built-in or plugin.
    public func provider(id: String) -> ProviderDescriptor? {
        providers.first { $0.id == id }
    }

    /// Create a provider instance for one session. Call it on the session's queue (the ABI's create rule).
    ///
    /// - Parameters:
    ///   - sampleRate: samples per second of the audio that will be pushed; the server always resamples to
    ///     16000 before pushing.
    ///   - optionsJSON: the session's provider options as a JSON object ("" or "{}" for none).
    /// - Throws: `PluginError` `.unknownProvider`, `.builtinProvider` (`none`, `device`), `.invalidArgument`,
    ///   `.invalidOptions` (the plugin's check_options refused the options: the client's mistake), or
    ///   `.createFailed` carrying the plugin's own message.
    public func makeInstance(
        providerID: String, sessionID: String, sampleRate: Int = 16000, optionsJSON: String,
        knownSpeakers: [KnownSpeaker] = []
    ) throws(PluginError) -> DiarizationInstance {
        guard let factory = factories[providerID] else {
            if ProviderDescriptor.builtins.contains(where: { $0.id == providerID }) {
                throw PluginError(.builtinProvider, "provider '\(providerID)' is built in and has no plugin instance")
            }
            throw PluginError(.unknownProvider, "no diarization provider '\(providerID)' is loaded")
        }
        guard sampleRate > 0, let rate = UInt32(exactly: sampleRate) else {
            throw PluginError(.invalidArgument, "sample rate \(sampleRate) is not a positive 32-bit value")
        }
        if let reason = provider(id: providerID)?.unavailableReason {
            throw PluginError(.providerUnavailable, reason)
        }
        try checkOptions(factory, optionsJSON: optionsJSON)
        let errorCapacity = 512
        var errorBuffer = [CChar](repeating: 0, count: errorCapacity)
        // Known speakers: the C array points into these buffers, which live until create() returns.
        let embeddings = knownSpeakers.map { ContiguousArray($0.profile.embedding) }
        let names = knownSpeakers.map { ($0.name ?? "").utf8CString }
        let created: UnsafeMutablePointer<speakersync_instance_t>? = optionsJSON.withCString { options in
            sessionID.withCString { session in
                withKnownSpeakerArray(knownSpeakers, embeddings: embeddings, names: names) { known, count in
                    var config = speakersync_instance_config_t(
                        struct_size: UInt32(MemoryLayout<speakersync_instance_config_t>.size),
                        sample_rate: rate, options_json: options, session_id: session,
                        known_speakers: known, known_speaker_count: count)
                    return errorBuffer.withUnsafeMutableBufferPointer { buffer in
                        factory.table.pointee.create(factory.table, &config, buffer.baseAddress, errorCapacity)
                    }
                }
            }
        }
        guard let created else {
            throw PluginError(.createFailed, Self.message(errorBuffer) ?? "the plugin's create() failed without a message")
        }
        return try DiarizationInstance(
            providerID: providerID, sessionID: sessionID, plugin: factory.plugin, factory: factory.table, instance: created, logger: logger)
    }

    /// Whether provider `providerID` accepts these session options, without creating anything: the
    /// plugin's check_options (ABI 1 revision 3). A plugin without it accepts everything here; its
    /// create() then judges. Throws `.invalidOptions` naming the option, or `.unknownProvider`.
    public func checkOptions(providerID: String, optionsJSON: String) throws(PluginError) {
        guard let factory = factories[providerID] else {
            throw PluginError(.unknownProvider, "no diarization provider '\(providerID)' is loaded")
        }
        try checkOptions(factory, optionsJSON: optionsJSON)
    }

    /// The plugin's verdict on a session's options before create() (revision 3; a plugin without
    /// check_options is only asked by create(), whose refusal is `.createFailed`).
    private func checkOptions(_ factory: Factory, optionsJSON: String) throws(PluginError) {
        guard ABIRevision.has(factory.table.pointee.struct_size, \speakersync_factory_t.check_options),
              let check = factory.table.pointee.check_options else { return }
        var errorBuffer = [CChar](repeating: 0, count: 512)
        let status = optionsJSON.withCString { options in
            errorBuffer.withUnsafeMutableBufferPointer { error in check(factory.table, options, error.baseAddress, error.count) }
        }
        guard status == SPEAKERSYNC_OK else {
            // Only INVALID_ARGUMENT blames the options; any other status is the plugin's own failure.
            throw PluginError(status == SPEAKERSYNC_ERR_INVALID_ARGUMENT ? .invalidOptions : .createFailed,
                              Self.message(errorBuffer) ?? "check_options failed with status \(status)", status: status)
        }
    }

    /// How long the push now starting waited after its audio arrived, for every loaded plugin's
    /// `backlog_seconds` (ABI revision 5): the plugins may shed work while it is high. Any thread.
    public func noteBacklog(seconds: Double) {
        for factory in factories.values { factory.plugin.noteBacklog(seconds: max(0, seconds)) }
    }

    /// Whether provider `providerID` can embed a voice (enrolment).
    public func supportsVoiceEmbedding(providerID: String) -> Bool {
        guard let table = factories[providerID]?.table else { return false }
        return ABIRevision.has(table.pointee.struct_size, \speakersync_factory_t.embed_voice) && table.pointee.embed_voice != nil
    }

    /// The provider's embedding of one person's voice from 16 kHz mono samples (enrolment). Safe from any thread.
    public func embedVoice(providerID: String, samples: [Float]) throws(PluginError) -> [Float] {
        guard let factory = factories[providerID] else { throw PluginError(.unknownProvider, "no diarization provider '\(providerID)' is loaded") }
        guard supportsVoiceEmbedding(providerID: providerID), let call = factory.table.pointee.embed_voice else {
            throw PluginError(.invalidArgument, "provider '\(providerID)' does not compute voice embeddings")
        }
        var out = [Float](repeating: 0, count: 4096)
        var dimension = 0
        var errorBuffer = [CChar](repeating: 0, count: 512)
        let status = samples.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                errorBuffer.withUnsafeMutableBufferPointer { error in
                    call(factory.table, input.baseAddress, input.count, output.baseAddress, output.count, &dimension, error.baseAddress, error.count)
                }
            }
        }
        guard status == SPEAKERSYNC_OK else {
            throw PluginError(.invalidArgument, Self.message(errorBuffer) ?? "embed_voice failed with status \(status)", status: status)
        }
        guard dimension > 0, dimension <= out.count else {
            throw PluginError(.invalidArgument, "the plugin reported an embedding of dimension \(dimension)")
        }
        return Array(out[0 ..< dimension])
    }

    /// A plugin-written error buffer as text; never trusts the plugin to NUL-terminate.
    private static func message(_ buffer: [CChar]) -> String? {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Loading helpers

    /// The plugin files of a folder in load order (`*.so`, `*.dylib`, by file name); an unreadable
    /// folder is one failure.
    public static func libraryPaths(
        in directory: String?, logger: Logger, failures: inout [PluginLoadFailure]
    ) -> [String] {
        guard let directory else { return [] }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory)
        } catch {
            failures.append(PluginLoadFailure(path: directory, code: .directoryUnreadable, message: "\(error)"))
            logger.error("plugins folder unreadable", metadata: ["folder": "\(directory)", "error": "\(error)"])
            return []
        }
        let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        return names.filter { $0.hasSuffix(".so") || $0.hasSuffix(".dylib") }.sorted().map { "\(base)/\($0)" }
    }

    private static func describe(
        _ factory: UnsafePointer<speakersync_factory_t>?, index: Int, path: String
    ) -> Result<ProviderDescriptor, PluginLoadFailure> {
        func invalid(_ message: String, _ id: String? = nil) -> Result<ProviderDescriptor, PluginLoadFailure> {
            .failure(PluginLoadFailure(path: path, code: .invalidProvider, message: "factory \(index): \(message)", providerID: id))
        }
        guard let factory else { return invalid("get_factory returned NULL") }
        guard Int(factory.pointee.struct_size) >= ABIRevision.factoryV1Size,
            let describe = factory.pointee.describe, factory.pointee.create != nil
        else { return invalid("factory table too small or has NULL members") }
        guard let d = describe(factory),
            Int(d.pointee.struct_size) >= MemoryLayout<speakersync_provider_descriptor_t>.size
        else { return invalid("describe returned NULL or a table too small for ABI v1") }
        let t = d.pointee
        guard let idPointer = t.id, let name = t.name, let version = t.version, let description = t.description,
            let licence = t.licence
        else { return invalid("descriptor has NULL strings") }
        let id = String(cString: idPointer)
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_.-")
        guard !id.isEmpty, id.count <= 64, id.allSatisfy(allowed.contains) else {
            return invalid("provider id '\(id)' must match [a-z0-9_.-]{1,64}", id)
        }
        let latency: LatencyClass
        switch t.latency_class {
        case SPEAKERSYNC_LATENCY_REALTIME.rawValue: latency = .realtime
        case SPEAKERSYNC_LATENCY_NEAR_REALTIME.rawValue: latency = .nearRealtime
        case SPEAKERSYNC_LATENCY_OFFLINE.rawValue: latency = .offline
        default: return invalid("unknown latency class \(t.latency_class)", id)
        }
        let has = { (member: PartialKeyPath<speakersync_provider_descriptor_t>, size: Int) -> Bool in
            MemoryLayout<speakersync_provider_descriptor_t>.offset(of: member).map { Int(t.struct_size) >= $0 + size } ?? false
        }
        let pointerSize = MemoryLayout<UnsafePointer<CChar>?>.size
        let requirements = has(\.requirements, pointerSize) ? t.requirements.map { String(cString: $0) } ?? "" : ""
        let measured = has(\.measured, pointerSize) ? t.measured.map { String(cString: $0) } ?? "" : ""
        return .success(
            ProviderDescriptor(
                id: id, name: String(cString: name), version: String(cString: version),
                description: String(cString: description), latencyClass: latency,
                licence: String(cString: licence), kind: .plugin(path: path), requirements: requirements, measured: measured,
                unavailableReason: availability(factory)))
    }

    /// The factory's `availability` (revision 4): nil when it can serve, else its reason.
    private static func availability(_ factory: UnsafePointer<speakersync_factory_t>) -> String? {
        guard ABIRevision.has(factory.pointee.struct_size, \speakersync_factory_t.availability),
              let check = factory.pointee.availability else { return nil }
        var reason = [CChar](repeating: 0, count: 1024)
        let status = reason.withUnsafeMutableBufferPointer { check(factory, $0.baseAddress, $0.count) }
        guard status != SPEAKERSYNC_OK else { return nil }
        return message(reason) ?? "the provider reports status \(status) and no reason"
    }
}

/// Lays `speakers` out as the C array create() reads, with pointers into `embeddings` and `names`.
private func withKnownSpeakerArray<R>(
    _ speakers: [KnownSpeaker], embeddings: [ContiguousArray<Float>], names: [ContiguousArray<CChar>],
    _ body: (UnsafePointer<speakersync_known_speaker_t>?, Int) -> R
) -> R {
    guard !speakers.isEmpty else { return body(nil, 0) }
    let array = UnsafeMutablePointer<speakersync_known_speaker_t>.allocate(capacity: speakers.count)
    defer { array.deallocate() }
    var pinned: [(UnsafeMutableBufferPointer<Float>, UnsafeMutableBufferPointer<CChar>)] = []
    defer { for (floats, chars) in pinned { floats.deallocate(); chars.deallocate() } }
    for (index, speaker) in speakers.enumerated() {
        let floats = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, embeddings[index].count))
        _ = floats.initialize(from: embeddings[index])
        let chars = UnsafeMutableBufferPointer<CChar>.allocate(capacity: names[index].count)
        _ = chars.initialize(from: names[index])
        pinned.append((floats, chars))
        (array + index).initialize(to: speakersync_known_speaker_t(
            speaker: speaker.speaker, flags: speaker.isPermanent ? SPEAKERSYNC_KNOWN_PERMANENT : 0,
            embedding: UnsafePointer(floats.baseAddress), dimension: UInt32(embeddings[index].count),
            duration_seconds: speaker.profile.durationSeconds,
            name: speaker.name == nil ? nil : UnsafePointer(chars.baseAddress)))
    }
    return body(UnsafePointer(array), speakers.count)
}
