/// Errors from `PluginRegistry.makeInstance` and `DiarizationInstance`, with stable codes.
public struct PluginError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, Codable {
        /// No provider with that id is loaded.
        case unknownProvider = "unknown_provider"
        /// `none` and `device` are handled by the server and have no instance.
        case builtinProvider = "builtin_provider"
        /// The plugin's create() failed; the message is the plugin's.
        case createFailed = "create_failed"
        /// The plugin's check_options refused the session's options; the message names the option.
        case invalidOptions = "invalid_options"
        /// An argument the host validates itself (sample rate, non-finite sample).
        case invalidArgument = "invalid_argument"
        /// push_audio returned an error; the message is the plugin's last_error.
        case pushFailed = "push_failed"
        /// pull_turns returned an error or broke the ABI contract.
        case pullFailed = "pull_failed"
        /// finalize returned an error.
        case finalizeFailed = "finalize_failed"
        /// The instance failed earlier or was already finalized.
        case invalidState = "invalid_state"
        /// Two threads called one instance at once (a bug in the caller; the plugin was not called).
        case concurrentUse = "concurrent_use"
        /// The worker process running the provider died (a signal, an abort, an exit); every session on
        /// it fails with this. Only with process isolation.
        case providerCrashed = "provider_crashed"
        /// A call into the provider overran its watchdog deadline; its worker was killed.
        case providerHung = "provider_hung"
        /// The provider crashed repeatedly and is held back until it has been quiet for a while, or its
        /// worker could not be started.
        case providerUnavailable = "provider_unavailable"
    }

    public var code: Code
    public var message: String
    /// The plugin's status code, when the error came from a plugin call.
    public var status: Int32?

    public init(_ code: Code, _ message: String, status: Int32? = nil) {
        self.code = code
        self.message = message
        self.status = status
    }

    public var description: String {
        status.map { "\(code.rawValue): \(message) (status \($0))" } ?? "\(code.rawValue): \(message)"
    }
}
