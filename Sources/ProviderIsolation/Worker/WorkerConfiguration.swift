import Foundation
import Logging
import PluginHost

/// How a worker loads its plugin with exactly its own provider configuration.
///
/// The provider config file holds every provider's section, and some hold secrets (Falcon's
/// AccessKey). A worker never reads the file (after its account switch it cannot): the server sends it
/// the sections of the provider ids its plugin declares, and no other. Those ids are known only once the
/// plugin is loaded (its factories come after init), so when the server has a configuration the plugin
/// is loaded twice: first with none (every `provider_config` answers NULL, as with no file; the bundled
/// plugins then list their providers as unavailable), which tells the ids; then, after the server's
/// answer and only if it has sections for them, again with those sections. The plugin ABI allows this:
/// a plugin loaded again gets init() again on fresh state (speakersync_plugin.h, deinit).
enum WorkerConfiguration {
    /// The registry to serve from and the sections it was loaded with. Waits for the server's
    /// `.configure` on `descriptor` when `config.receivesConfiguration`; a server that closes the socket
    /// instead ends the worker.
    static func load(_ config: ProviderWorkerConfig, descriptor: Int32, outbox: WorkerOutbox,
                     logger: Logger) -> (registry: PluginRegistry, sections: [String: String]) {
        var registry: PluginRegistry? = PluginRegistry(libraryPaths: [config.pluginPath], configuration: .empty, logger: logger)
        guard config.receivesConfiguration else { return (registry!, [:]) }
        let declared = registry!.providers.filter { if case .plugin = $0.kind { true } else { false } }.map(\.id)
        outbox.send(.configurationWanted(providerIDs: declared))
        // Whatever the server sent, only the declared ids' sections are kept.
        let sections = waitForSections(descriptor: descriptor, logger: logger).filter { declared.contains($0.key) }
        guard !sections.isEmpty else { return (registry!, [:]) }
        // The first copy must be gone (its deinit run) before the second load, or the registry would
        // share the copy already loaded, configuration and all (LoadedPlugin.shared).
        registry = nil
        return (PluginRegistry(libraryPaths: [config.pluginPath], configuration: ProviderConfiguration(sections: sections), logger: logger),
                sections)
    }

    /// Reads frames until the server's `.configure`; the server sends nothing else before `.ready`.
    private static func waitForSections(descriptor: Int32, logger: Logger) -> [String: String] {
        let reader = WorkerRequestReader(descriptor: descriptor, chunkBytes: 64 << 10, logger: logger)
        var answer: [String: String]?
        while answer == nil {
            reader.readOnce { request in
                guard answer == nil, case .configure(let sections) = request else {
                    throw WireError("a request before the provider configuration")
                }
                answer = sections
            }
        }
        return answer!
    }
}
