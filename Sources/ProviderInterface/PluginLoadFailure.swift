/// A plugin file (or one provider inside it) the registry could not load. Listed by `GET /v1/providers`.
public struct PluginLoadFailure: Error, Sendable, Hashable, Encodable {
    /// Stable reason codes (the JSON value is the raw value).
    public enum Code: String, Sendable, Hashable, Codable {
        /// The plugins folder could not be listed.
        case directoryUnreadable = "directory_unreadable"
        /// dlopen failed (not a shared library, missing dependency, wrong architecture).
        case dlopenFailed = "dlopen_failed"
        /// The library has no `speakersync_plugin_entry` symbol: not a SpeakerSync plugin.
        case missingEntry = "missing_entry"
        /// The entry function returned NULL, a table too small for ABI v1, or NULL members.
        case invalidEntry = "invalid_entry"
        /// The plugin was built against another ABI version.
        case incompatibleABI = "incompatible_abi"
        /// The plugin's init refused to load.
        case initFailed = "init_failed"
        /// A factory or its descriptor is malformed (NULL, too small, bad id or latency class).
        case invalidProvider = "invalid_provider"
        /// Another provider with the same id was loaded first (built-ins come first of all).
        case duplicateProvider = "duplicate_provider"
        /// The plugin offers no valid provider.
        case noProviders = "no_providers"
        /// The worker process that loads the plugin (process isolation) could not start, crashed while
        /// loading it, or did not finish within the load deadline. The message says which.
        case workerFailed = "worker_failed"
        /// The worker's sandbox could not be set up before the load (as root: no account to switch to,
        /// or the switch failed), so the plugin was not loaded at all. The message says which step.
        case sandboxFailed = "sandbox_failed"
    }

    /// The plugin file (or the folder, for `directoryUnreadable`).
    public var path: String
    public var code: Code
    public var message: String
    /// The provider concerned, when the failure is about one provider of a library.
    public var providerID: String?

    public init(path: String, code: Code, message: String, providerID: String? = nil) {
        self.path = path
        self.code = code
        self.message = message
        self.providerID = providerID
    }

    private enum CodingKeys: String, CodingKey {
        case path, code, message
        case providerID = "provider_id"
    }
}
