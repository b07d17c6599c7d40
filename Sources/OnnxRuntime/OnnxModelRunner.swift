import COnnxRuntime
import Foundation

/// One onnxruntime session over a model file: a float tensor in and out (the pyannote segmentation
/// model), or several tensors in and out (the silero VAD with its recurrent state). The raw calls of the
/// shim (Sources/COnnxRuntime) become thrown errors here and nowhere else.
///
/// `@unchecked Sendable`: the handle is immutable after init, and `run` holds `lock` for the whole call,
/// so one session never runs on two threads at once (the shim's rule); freed once, in deinit.
public final class OnnxModelRunner: @unchecked Sendable {
    public let modelPath: String
    private let handle: OpaquePointer
    private let lock = NSLock()

    public init(modelPath: String, libraryPath: String, threads: Int = 1) throws(OnnxRuntimeError) {
        guard FileManager.default.fileExists(atPath: modelPath) else {
            throw OnnxRuntimeError(.modelNotFound, "\(modelPath) does not exist (run scripts/setup)")
        }
        guard FileManager.default.fileExists(atPath: libraryPath) else {
            throw OnnxRuntimeError(.runtimeUnavailable, "\(libraryPath) does not exist (run scripts/setup)")
        }
        var error = [CChar](repeating: 0, count: 1024)
        let opened = libraryPath.withCString { library in
            modelPath.withCString { model in ss_ort_model_open(library, model, Int32(max(1, threads)), &error, error.count) }
        }
        guard let opened else {
            let message = Self.message(error)
            throw OnnxRuntimeError(message.hasPrefix("cannot open") || message.contains("C API") ? .runtimeUnavailable : .invalidModel, message)
        }
        self.modelPath = modelPath
        handle = opened
    }

    deinit {
        ss_ort_model_close(handle)
    }

    /// Runs the model; `outputCapacity` bounds the output's float count.
    public func run(input: UnsafeBufferPointer<Float>, shape: [Int], inputName: String, outputName: String,
                    outputCapacity: Int) throws(OnnxRuntimeError) -> (values: [Float], shape: [Int]) {
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
            throw OnnxRuntimeError(.runFailed, Self.message(error))
        }
        output.removeLast(output.count - Int(written))
        return (output, outputShape.prefix(rank).map { Int($0) })
    }

    /// One tensor in for `run(inputs:outputs:)`: float32 or int64 values with their shape.
    public enum Input {
        case float(name: String, values: UnsafeBufferPointer<Float>, shape: [Int])
        case int64(name: String, values: UnsafeBufferPointer<Int64>, shape: [Int])
    }

    /// Runs the model on several inputs; each float32 output named in `outputs` (name, capacity in
    /// floats) is copied out, in that order.
    public func run(inputs: [Input], outputs: [(name: String, capacity: Int)]) throws(OnnxRuntimeError) -> [[Float]] {
        let buffers = outputs.map { UnsafeMutableBufferPointer<Float>.allocate(capacity: $0.capacity) }
        // The C strings and shapes must outlive the call: owned here until it returns.
        let names = (inputs.map(\.name) + outputs.map(\.name)).map { strdup($0) }
        let shapes = inputs.map { input in
            let shape = UnsafeMutableBufferPointer<Int64>.allocate(capacity: max(1, input.shape.count))
            for (index, dimension) in input.shape.enumerated() { shape[index] = Int64(dimension) }
            return shape
        }
        defer {
            buffers.forEach { $0.deallocate() }
            names.forEach { free($0) }
            shapes.forEach { $0.deallocate() }
        }
        var cInputs = inputs.enumerated().map { index, input in
            ss_ort_input(name: names[index], element_type: input.elementType, data: input.data,
                         shape: UnsafePointer(shapes[index].baseAddress), rank: input.shape.count)
        }
        var cOutputs = buffers.enumerated().map { index, buffer in
            ss_ort_output(name: names[inputs.count + index], data: buffer.baseAddress, capacity: buffer.count, written: 0)
        }
        var error = [CChar](repeating: 0, count: 1024)
        let status = lock.withLock {
            ss_ort_model_run_many(handle, &cInputs, cInputs.count, &cOutputs, cOutputs.count, &error, error.count)
        }
        guard status == 0 else {
            throw OnnxRuntimeError(.runFailed, Self.message(error))
        }
        return zip(buffers, cOutputs).map { buffer, output in Array(buffer.prefix(Int(output.written))) }
    }

    /// The shim's NUL-terminated message in `error`.
    private static func message(_ error: [CChar]) -> String {
        String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}


extension OnnxModelRunner.Input {
    var name: String {
        switch self {
        case .float(let name, _, _), .int64(let name, _, _): name
        }
    }

    var shape: [Int] {
        switch self {
        case .float(_, _, let shape), .int64(_, _, let shape): shape
        }
    }

    var elementType: Int32 {
        switch self {
        case .float: Int32(SS_ORT_FLOAT)
        case .int64: Int32(SS_ORT_INT64)
        }
    }

    var data: UnsafeRawPointer? {
        switch self {
        case .float(_, let values, _): UnsafeRawPointer(values.baseAddress)
        case .int64(_, let values, _): UnsafeRawPointer(values.baseAddress)
        }
    }
}
