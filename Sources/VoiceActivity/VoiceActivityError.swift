/// A failure to set up voice activity detection, with a stable `code` for machines and a `message`
/// that says what was wrong and how to fix it.
public struct VoiceActivityError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, Codable {
        /// `libraryDirectory` does not exist or holds no `libsherpa-onnx-c-api.so` / `libonnxruntime.so`.
        case libraryNotFound = "library_not_found"
        /// dlopen refused the library; the message is dlerror()'s text.
        case libraryLoadFailed = "library_load_failed"
        /// The library lacks a function this module calls.
        case missingSymbol = "missing_symbol"
        /// The library is not the sherpa-onnx release whose struct layout this module mirrors.
        case unsupportedLibraryVersion = "unsupported_library_version"
        /// `modelPath` names no readable file.
        case modelNotFound = "model_not_found"
        /// A `VADConfig` value sherpa-onnx would reject (or worse, exit the process on).
        case invalidConfig = "invalid_config"
        /// sherpa-onnx returned no detector (e.g. the model file is not an ONNX model); its reason is on stderr.
        case createFailed = "create_failed"
        /// onnxruntime refused to run the silero model (`VADEngine.onnxRuntime`); its message follows.
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
