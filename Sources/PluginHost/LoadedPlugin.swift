#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSpeakerSyncPluginABI
import Logging
import Synchronization

/// One dlopen'd plugin library that passed the ABI checks and whose init succeeded.
///
/// Lifetime: the registry and every instance created from the library hold a strong reference, so
/// `deinit()` and `dlclose` run only after the registry is gone AND every instance has been destroyed.
/// The library is opened with RTLD_NODELETE, so even then its code and data stay mapped: a plugin written
/// in Swift registers its protocol conformances and type metadata with the process's Swift runtime when
/// it is loaded, and that runtime has no way to forget them. Unmapping such a library left the runtime
/// pointing into freed pages, and the next dynamic cast that scanned the conformance records crashed the
/// process (a CI run died with SIGSEGV in swift_conformsToProtocol after tests released their registries
/// of speakerkit). C++ plugins with thread_local destructors have the same hazard. In a server the
/// registry lives for the process anyway; loading the same file again reuses the mapping and calls
/// init() again.
/// Immutable after loading; the C tables it points to are plugin-owned constants.
final class LoadedPlugin: @unchecked Sendable {
    let path: String
    let entry: UnsafePointer<speakersync_plugin_entry_t>
    private let handle: UnsafeMutableRawPointer
    private let hostTable: UnsafeMutablePointer<speakersync_host_t>
    private let logContext: Unmanaged<PluginHostContext>
    private let logger: Logger

    /// A load step that failed: the failure to report (the library is already closed).
    struct LoadError: Error {
        var failure: PluginLoadFailure
    }

    /// Open, check and init the library at `path`. On failure the handle is closed again (the mapping
    /// stays: RTLD_NODELETE, see the type's comment; its load already ran the library's constructors).
    init(path: String, configuration: ProviderConfiguration, logger: Logger) throws(LoadError) {
        func fail(_ code: PluginLoadFailure.Code, _ message: String) -> LoadError {
            LoadError(failure: PluginLoadFailure(path: path, code: code, message: message))
        }
        _ = dlerror()
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            throw fail(.dlopenFailed, reason)
        }
        guard let symbol = dlsym(handle, SPEAKERSYNC_PLUGIN_ENTRY_SYMBOL) else {
            dlclose(handle)
            throw fail(.missingEntry, "no '\(SPEAKERSYNC_PLUGIN_ENTRY_SYMBOL)' symbol: not a SpeakerSync plugin")
        }
        typealias EntryFunction = @convention(c) () -> UnsafePointer<speakersync_plugin_entry_t>?
        let entryFunction = unsafeBitCast(symbol, to: EntryFunction.self)
        guard let entry = entryFunction() else {
            dlclose(handle)
            throw fail(.invalidEntry, "speakersync_plugin_entry() returned NULL")
        }
        // struct_size and abi_version are the first two members in every ABI version, so they are
        // safe to read before anything else is known about the table.
        let structSize = Int(entry.pointee.struct_size)
        let abiVersion = entry.pointee.abi_version
        guard abiVersion == SPEAKERSYNC_PLUGIN_ABI_VERSION else {
            dlclose(handle)
            throw fail(
                .incompatibleABI,
                "plugin ABI version \(abiVersion), host expects \(SPEAKERSYNC_PLUGIN_ABI_VERSION)")
        }
        let minimumSize = MemoryLayout<speakersync_plugin_entry_t>.size
        guard structSize >= minimumSize else {
            dlclose(handle)
            throw fail(.invalidEntry, "entry table is \(structSize) bytes, ABI v1 needs at least \(minimumSize)")
        }
        let table = entry.pointee
        guard let initFunction = table.`init`, table.`deinit` != nil, table.get_factory_count != nil,
            table.get_factory != nil
        else {
            dlclose(handle)
            throw fail(.invalidEntry, "entry table has NULL function members")
        }

        let context = Unmanaged.passRetained(PluginHostContext(logger: logger, path: path, configuration: configuration))
        let host = UnsafeMutablePointer<speakersync_host_t>.allocate(capacity: 1)
        host.initialize(
            to: speakersync_host_t(
                struct_size: UInt32(MemoryLayout<speakersync_host_t>.size),
                abi_version: SPEAKERSYNC_PLUGIN_ABI_VERSION,
                host_data: context.toOpaque(),
                log: pluginLogCallback,
                provider_config: pluginProviderConfigCallback,
                backlog_seconds: pluginBacklogCallback))
        let status = initFunction(host)
        guard status == SPEAKERSYNC_OK else {
            dlclose(handle)
            host.deallocate()
            context.release()
            throw fail(.initFailed, "init returned status \(status)")
        }
        self.path = path
        self.handle = handle
        self.entry = entry
        self.hostTable = host
        self.logContext = context
        self.logger = logger
    }

    /// What the plugin's `backlog_seconds` answers from now on (any thread).
    func noteBacklog(seconds: Double) {
        logContext.takeUnretainedValue().backlogSeconds = seconds
    }

    /// The plugin's factories, in its order; nil entries where get_factory returned NULL.
    func factories() -> [UnsafePointer<speakersync_factory_t>?] {
        let count = min(entry.pointee.get_factory_count!(), 1024)  // a sane cap against garbage
        return (0..<count).map { entry.pointee.get_factory!($0) }
    }

    deinit {
        entry.pointee.`deinit`!()
        if dlclose(handle) != 0 {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown"
            logger.warning("dlclose failed", metadata: ["plugin": "\(path)", "reason": "\(reason)"])
        }
        hostTable.deinitialize(count: 1)
        hostTable.deallocate()
        logContext.release()
    }
}

extension LoadedPlugin {
    /// Sendable: `plugin` is read and written only inside the `loaded` mutex below.
    private final class WeakPlugin: @unchecked Sendable {
        weak var plugin: LoadedPlugin?
        init(_ plugin: LoadedPlugin) { self.plugin = plugin }
    }

    /// Libraries loaded in this process, by real path. dlopen shares one copy of a library between
    /// everyone who opens it, so its init()/deinit() pair must run once per process, not once per
    /// registry (a process with two servers, as tests have, would otherwise deinit a plugin another
    /// registry still uses).
    private static let loaded = Mutex<[String: WeakPlugin]>([:])

    /// The process's loaded copy of the library at `path`, loading (and initialising) it if needed.
    /// `configuration` is what its init() sees; a copy already loaded keeps the configuration it was
    /// loaded with (tests that need another load a copy of the file under another name).
    static func shared(path: String, configuration: ProviderConfiguration, logger: Logger) throws(LoadError) -> LoadedPlugin {
        let key = realpath(path, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        } ?? path
        return try loaded.withLock { (table) throws(LoadError) -> LoadedPlugin in
            if let existing = table[key]?.plugin { return existing }
            let plugin = try LoadedPlugin(path: path, configuration: configuration, logger: logger)
            table[key] = WeakPlugin(plugin)
            return plugin
        }
    }
}
