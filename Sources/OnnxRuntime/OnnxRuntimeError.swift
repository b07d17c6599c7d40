/// A failure of onnxruntime or of a model on it, with a stable code. Model wrappers (the pyannote
/// segmentation model, the silero VAD) map it onto their own errors.
public struct OnnxRuntimeError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// onnxruntime could not be opened (vendor/ missing, or no C API version 1 in it).
        case runtimeUnavailable = "runtime_unavailable"
        /// The model file does not exist.
        case modelNotFound = "model_not_found"
        /// onnxruntime refused the model.
        case invalidModel = "invalid_model"
        /// A run failed (the message is onnxruntime's).
        case runFailed = "run_failed"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
