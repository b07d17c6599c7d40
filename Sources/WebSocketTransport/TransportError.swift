/// Errors thrown by the transport, with a stable `code` for logs and tests.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// `lws_create_context` failed (bad interface, port in use, ...).
        case contextCreationFailed = "context_creation_failed"
        /// The server's port is taken by another listener (EADDRINUSE).
        case addressInUse = "address_in_use"
        /// The context has no listening socket / port.
        case listenFailed = "listen_failed"
        case alreadyStarted = "already_started"
        /// The instance was shut down; it cannot be (re)started.
        case shutDown = "shut_down"
        /// A URL given to `WebSocketClient.connect` is not `ws[s]://host[:port][/path][?query]`.
        case invalidURL = "invalid_url"
        /// An lws call returned an error code.
        case lwsCallFailed = "lws_call_failed"
        /// A configuration value is out of range.
        case invalidConfig = "invalid_config"
        /// A TLS file (server certificate or key, client CA file) is missing, unreadable or not a regular file.
        case tlsFileUnreadable = "tls_file_unreadable"
        /// A TLS file was read but does not hold what it should (no PEM certificate, no or an encrypted key).
        case tlsFileInvalid = "tls_file_invalid"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
