#if canImport(Glibc)
import Glibc
#endif
import CSpeakerSyncPluginABI
import Synchronization

/// The C tables of a Swift plugin: one entry table, a factory and a descriptor per provider, an
/// instance table per session, all behind C function pointers that find their Swift objects through
/// `factory_data` and `instance_data`.
///
/// A plugin calls `PluginEntryTables.entry(name:initialize:)` from its one exported function; the
/// providers are made in the ABI's init() from the host connection and dropped in deinit(). Each
/// plugin library has its own copy of this module, so the state below is per plugin.
public enum PluginEntryTables {
    /// Sendable: it lives only inside the `loaded` mutex; the pointers are this module's own
    /// allocations, freed in deinit.
    private struct Loaded: @unchecked Sendable {
        var providers: [any PluginProvider]
        var factories: [UnsafeMutablePointer<speakersync_factory_t>]
        var descriptors: [UnsafeMutablePointer<speakersync_provider_descriptor_t>]
        var strings: [UnsafeMutablePointer<CChar>]
    }

    /// Sendable: it lives only inside the `plugin` mutex; `entry` is allocated once and never freed.
    private struct Plugin: @unchecked Sendable {
        var name: String
        var initialize: (PluginHostConnection) throws -> [any PluginProvider]
        var entry: UnsafeMutablePointer<speakersync_plugin_entry_t>
    }

    private static let plugin = Mutex<Plugin?>(nil)
    private static let loaded = Mutex<Loaded?>(nil)

    /// The entry table (made once per library). `initialize` runs in init(): it makes the providers;
    /// a throw refuses the load (logged through the host).
    public static func entry(name: String, initialize: @escaping (PluginHostConnection) throws -> [any PluginProvider])
        -> UnsafePointer<speakersync_plugin_entry_t> {
        let address = plugin.withLock { plugin -> UInt in
            if let existing = plugin { return UInt(bitPattern: existing.entry) }
            let table = UnsafeMutablePointer<speakersync_plugin_entry_t>.allocate(capacity: 1)
            table.initialize(to: speakersync_plugin_entry_t(
                struct_size: UInt32(MemoryLayout<speakersync_plugin_entry_t>.size),
                abi_version: SPEAKERSYNC_PLUGIN_ABI_VERSION,
                init: { host in PluginEntryTables.initialize(host) },
                deinit: { PluginEntryTables.deinitialize() },
                get_factory_count: { UInt32(PluginEntryTables.loaded.withLock { $0?.factories.count ?? 0 }) },
                get_factory: { index in
                    PluginEntryTables.loaded.withLock { loaded in
                        guard let loaded, Int(index) < loaded.factories.count else { return nil }
                        return UnsafePointer(loaded.factories[Int(index)])
                    }
                }))
            plugin = Plugin(name: name, initialize: initialize, entry: table)
            return UInt(bitPattern: table)
        }
        return UnsafePointer(bitPattern: address)!
    }

    private static func initialize(_ host: UnsafePointer<speakersync_host_t>?) -> speakersync_status_t {
        guard let host, let plugin = plugin.withLock({ $0 }) else { return SPEAKERSYNC_ERR_INVALID_ARGUMENT }
        let connection = PluginHostConnection(host: host, pluginName: plugin.name)
        let providers: [any PluginProvider]
        do {
            providers = try plugin.initialize(connection)
        } catch {
            connection.logger.error("cannot load: \(error)")
            return SPEAKERSYNC_ERR_UNSUPPORTED
        }
        var strings: [UnsafeMutablePointer<CChar>] = []
        func keep(_ text: String) -> UnsafePointer<CChar> {
            let pointer = strdup(text)!
            strings.append(pointer)
            return UnsafePointer(pointer)
        }
        var factories: [UnsafeMutablePointer<speakersync_factory_t>] = []
        var descriptors: [UnsafeMutablePointer<speakersync_provider_descriptor_t>] = []
        for provider in providers {
            let d = provider.descriptor
            let descriptor = UnsafeMutablePointer<speakersync_provider_descriptor_t>.allocate(capacity: 1)
            descriptor.initialize(to: speakersync_provider_descriptor_t(
                struct_size: UInt32(MemoryLayout<speakersync_provider_descriptor_t>.size),
                id: keep(d.id), name: keep(d.name), version: keep(d.version), description: keep(d.description),
                latency_class: d.latencyClass.rawValue, licence: keep(d.licence),
                requirements: keep(d.requirements), measured: keep(d.measured)))
            descriptors.append(descriptor)
            let factory = UnsafeMutablePointer<speakersync_factory_t>.allocate(capacity: 1)
            factory.initialize(to: speakersync_factory_t(
                struct_size: UInt32(MemoryLayout<speakersync_factory_t>.size),
                factory_data: UnsafeMutableRawPointer(descriptor),
                describe: { factory in UnsafePointer(factory?.pointee.factory_data?.assumingMemoryBound(to: speakersync_provider_descriptor_t.self)) },
                create: PluginFactoryCalls.create,
                embed_voice: provider.embedsVoices ? PluginFactoryCalls.embedVoice : nil,
                check_options: PluginFactoryCalls.checkOptions,
                availability: PluginFactoryCalls.availability,
                push_audio_many: provider.batchesPushes ? PluginFactoryCalls.pushAudioMany : nil))
            factories.append(factory)
        }
        loaded.withLock { $0 = Loaded(providers: providers, factories: factories, descriptors: descriptors, strings: strings) }
        return SPEAKERSYNC_OK
    }

    private static func deinitialize() {
        guard let old = loaded.withLock({ value -> Loaded? in defer { value = nil }; return value }) else { return }
        for factory in old.factories { factory.deinitialize(count: 1); factory.deallocate() }
        for descriptor in old.descriptors { descriptor.deinitialize(count: 1); descriptor.deallocate() }
        for string in old.strings { free(string) }
    }

    /// The provider behind a factory table (found by its position: factories and providers are parallel).
    static func provider(_ factory: UnsafePointer<speakersync_factory_t>?) -> (any PluginProvider)? {
        guard let factory else { return nil }
        return loaded.withLock { loaded in
            guard let loaded, let index = loaded.factories.firstIndex(where: { UnsafePointer($0) == factory }) else { return nil }
            return loaded.providers[index]
        }
    }
}

/// Writes a NUL-terminated message into a host-owned buffer, truncated to fit.
func writeMessage(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ message: String) {
    guard let buffer, size > 0 else { return }
    let bytes = Array(message.utf8.prefix(size - 1))
    for (index, byte) in bytes.enumerated() { buffer[index] = CChar(bitPattern: byte) }
    buffer[bytes.count] = 0
}
