/// A failure of sherpa-onnx's speaker APIs, with a stable code.
public struct SherpaOnnxSpeakersError: Error, CustomStringConvertible, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// The vendored library is missing, another version, or lacks a function (the message says which).
        case libraryUnavailable = "library_unavailable"
        /// A model file does not exist or cannot be read.
        case modelNotFound = "model_not_found"
        /// A model file is not one the loader accepts (not ONNX, metadata or shapes it cannot use).
        case invalidModel = "invalid_model"
        /// sherpa-onnx returned nothing where it should have created an object.
        case createFailed = "create_failed"
        /// Audio the API cannot take (too short, non-finite, another sample rate).
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
