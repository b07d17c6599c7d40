import COnnxRuntime
import Foundation

/// One onnxruntime session over a model file: a float tensor in, a float tensor out. The raw calls of
/// the shim (Sources/COnnxRuntime) become thrown errors here and nowhere else.
///
/// `@unchecked Sendable`: the handle is immutable after init, and `run` holds `lock` for the whole call,
/// so one session never runs on two threads at once (the shim's rule); freed once, in deinit.
public final class OnnxModelRunner: @unchecked Sendable {
    public let modelPath: String
    private let handle: OpaquePointer
    private let lock = NSLock()

    public init(modelPath: String, libraryPath: String, threads: Int = 1) throws(SpeakerSegmentationError) {
        guard FileManager.default.fileExists(atPath: modelPath) else {
            throw SpeakerSegmentationError(.modelNotFound, "\(modelPath) does not exist (run scripts/setup)")
        }
        guard FileManager.default.fileExists(atPath: libraryPath) else {
            throw SpeakerSegmentationError(.runtimeUnavailable, "\(libraryPath) does not exist (run scripts/setup)")
        }
        var error = [CChar](repeating: 0, count: 1024)
        let opened = libraryPath.withCString { library in
            modelPath.withCString { model in ss_ort_model_open(library, model, Int32(max(1, threads)), &error, error.count) }
        }
        guard let opened else {
            let message = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw SpeakerSegmentationError(message.hasPrefix("cannot open") || message.contains("C API") ? .runtimeUnavailable : .invalidModel, message)
        }
        self.modelPath = modelPath
        handle = opened
    }

    deinit {
        ss_ort_model_close(handle)
    }

    /// Runs the model; `outputCapacity` bounds the output's float count.
    public func run(input: UnsafeBufferPointer<Float>, shape: [Int], inputName: String, outputName: String,
                    outputCapacity: Int) throws(SpeakerSegmentationError) -> (values: [Float], shape: [Int]) {
        var output = [Float](repeating: 0, count: outputCapacity)
        var outputShape = [Int64](repeating: 0, count: 8)
        var rank = outputShape.count
        var error = [CChar](repeating: 0, count: 1024)
        let dimensions = shape.map(Int64.init)
        let written: Int64 = lock.withLock {
            inputName.withCString { inputName in
                outputName.withCString { outputName in
                    ss_ort_model_run(handle, inputName, input.baseAddress, dimensions, dimensions.count, outputName, &output,
                                     output.count, &outputShape, &rank, &error, error.count)
                }
            }
        }
        guard written >= 0 else {
            throw SpeakerSegmentationError(.runFailed, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        output.removeLast(output.count - Int(written))
        return (output, outputShape.prefix(rank).map { Int($0) })
    }
}
