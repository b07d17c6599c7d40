/// A failure of Picovoice Falcon or of loading it, with a stable code, Picovoice's message stack as it
/// gave it (most general first) and never the AccessKey: `redacting(_:)` is applied to everything that
/// leaves `FalconEngine`, because Picovoice's own messages quote the key ("Failed to parse AccessKey `…`").
public struct FalconError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        // Picovoice's pv_status_t, 1...11.
        case outOfMemory = "out_of_memory"
        case ioError = "io_error"
        case invalidArgument = "invalid_argument"
        case stopIteration = "stop_iteration"
        case keyError = "key_error"
        case invalidState = "invalid_state"
        case runtimeError = "runtime_error"
        case activationError = "activation_error"
        case activationLimitReached = "activation_limit_reached"
        case activationThrottled = "activation_throttled"
        case activationRefused = "activation_refused"
        case unknownStatus = "unknown_status"
        // Ours.
        case libraryNotFound = "library_not_found"
        case symbolMissing = "symbol_missing"
        case modelNotFound = "model_not_found"
        case invalidConfig = "invalid_config"

        /// The code of a pv_status_t (nil for success).
        init?(status: Int32) {
            let byStatus: [Code] = [.outOfMemory, .ioError, .invalidArgument, .stopIteration, .keyError, .invalidState, .runtimeError,
                                    .activationError, .activationLimitReached, .activationThrottled, .activationRefused]
            guard status != 0 else { return nil }
            self = (1 ... 11).contains(status) ? byStatus[Int(status) - 1] : .unknownStatus
        }

        /// Statuses that mean the AccessKey or its activation: the provider cannot serve until the
        /// operator acts (or Picovoice's servers can be reached).
        public var isActivation: Bool {
            [.activationError, .activationLimitReached, .activationThrottled, .activationRefused, .invalidArgument, .keyError].contains(self)
        }
    }

    public var code: Code
    /// What failed, e.g. "pv_falcon_init failed: INVALID_ARGUMENT".
    public var message: String
    /// Picovoice's messages (pv_get_error_stack), most general first.
    public var stack: [String]

    public init(_ code: Code, _ message: String, stack: [String] = []) {
        self.code = code
        self.message = message
        self.stack = stack
    }

    public var description: String {
        stack.isEmpty ? message : message + ": " + stack.enumerated().map { "[\($0.offset)] \($0.element)" }.joined(separator: " ")
    }

    /// The same error with every occurrence of `secret` replaced.
    public func redacting(_ secret: String?) -> FalconError {
        guard let secret, !secret.isEmpty else { return self }
        func scrub(_ text: String) -> String { text.replacingAll(secret, with: "[redacted]") }
        return FalconError(code, scrub(message), stack: stack.map(scrub))
    }
}

extension String {
    /// Every occurrence of `target` replaced (a name of its own, so it never competes with Foundation's).
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
