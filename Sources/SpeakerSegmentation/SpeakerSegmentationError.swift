import OnnxRuntime

/// A structured error of the segmentation model, with a stable code.
public struct SpeakerSegmentationError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// onnxruntime could not be opened (vendor/ missing, or no C API version 1 in it).
        case runtimeUnavailable = "runtime_unavailable"
        /// The model file does not exist.
        case modelNotFound = "model_not_found"
        /// onnxruntime refused the model, or its output is not the shape a segmentation model has.
        case invalidModel = "invalid_model"
        /// A run failed (the message is onnxruntime's).
        case runFailed = "run_failed"
        /// Audio the model cannot take (empty, shorter than one frame's receptive field, non-finite).
        case invalidAudio = "invalid_audio"
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

extension SpeakerSegmentationError {
    /// onnxruntime's failure under the same code (the codes are shared).
    init(_ error: OnnxRuntimeError) {
        let code: Code = switch error.code {
        case .runtimeUnavailable: .runtimeUnavailable
        case .modelNotFound: .modelNotFound
        case .invalidModel: .invalidModel
        case .runFailed: .runFailed
        }
        self.init(code, error.message)
    }
}
