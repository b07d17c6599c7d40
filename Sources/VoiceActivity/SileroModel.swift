import Foundation
import OnnxRuntime
import Synchronization

/// The silero VAD v5 model on onnxruntime, run by this project (not by sherpa-onnx) so that the windows
/// of many streams go through one call with a batch dimension: `SileroBatch`. One per process and
/// model file (`shared`); any thread.
///
/// The model's inputs are `input` [B, 576] (one 512-sample step after 64 samples of context),
/// `state` [2, B, 128] (two LSTM layers) and `sr` (int64, 16000); its outputs `output` [B, 1] (the
/// speech probability) and `stateN`, the next state. A stream's state is kept here as 256 floats,
/// layer by layer.
///
/// onnxruntime's sessions may run on several threads at once, but `OnnxModelRunner` serialises its own
/// calls, so the model keeps one runner per thread that needs one (about one per core in a worker).
public final class SileroModel: Sendable {
    public static let stateSize = 2 * hiddenSize
    static let hiddenSize = 128
    public let modelPath: String
    public let windowSamples: Int
    private let libraryPath: String
    private let idle: Mutex<[OnnxModelRunner]>

    private static let models = Mutex<[String: SileroModel]>([:])

    /// The process's model for `config` (opened once per model file and library).
    public static func shared(_ config: VADConfig) throws(VoiceActivityError) -> SileroModel {
        let key = config.modelPath + "\u{0}" + config.libraryDirectory
        if let model = models.withLock({ $0[key] }) { return model }
        let model = try SileroModel(config: config)
        return models.withLock { models in
            if let earlier = models[key] { return earlier }
            models[key] = model
            return model
        }
    }

    init(config: VADConfig) throws(VoiceActivityError) {
        modelPath = config.modelPath
        windowSamples = config.windowSizeSamples + 64 * config.sampleRate / 16_000
        libraryPath = (config.libraryDirectory as NSString).appendingPathComponent(VendorLocation.onnxRuntimeFileName)
        idle = Mutex([])
        guard FileManager.default.fileExists(atPath: libraryPath) else {
            throw VoiceActivityError(.libraryNotFound, "no \(VendorLocation.onnxRuntimeFileName) in \(config.libraryDirectory): run scripts/setup "
                                     + "(it installs sherpa-onnx's onnxruntime into vendor/sherpa-onnx/lib) or set \(VendorLocation.libraryEnvironmentVariable)")
        }
        // One run now proves the file is silero v5 with these shapes, at load rather than mid-stream.
        let runner = try Self.open(modelPath: modelPath, libraryPath: libraryPath)
        idle.withLock { $0.append(runner) }
        var state = [Float](repeating: 0, count: Self.stateSize)
        let probability = try run(windows: [Float](repeating: 0, count: windowSamples), states: &state, count: 1)
        guard probability.count == 1, probability[0].isFinite else {
            throw VoiceActivityError(.createFailed, "\(modelPath) is not silero VAD v5: it gave \(probability) for one window")
        }
    }

    private static func open(modelPath: String, libraryPath: String) throws(VoiceActivityError) -> OnnxModelRunner {
        do {
            return try OnnxModelRunner(modelPath: modelPath, libraryPath: libraryPath, threads: 1)
        } catch {
            let code: VoiceActivityError.Code = switch error.code {
            case .runtimeUnavailable: .libraryLoadFailed
            case .modelNotFound: .modelNotFound
            case .invalidModel, .runFailed: .createFailed
            }
            throw VoiceActivityError(code, error.message)
        }
    }

    /// The speech probabilities of `count` windows (`count` × `windowSamples` samples, one after the
    /// other) of `count` different streams, whose states (`count` × `stateSize`) are advanced in place.
    public func run(windows: [Float], states: inout [Float], count: Int) throws(VoiceActivityError) -> [Float] {
        precondition(windows.count == count * windowSamples && states.count == count * Self.stateSize)
        let hidden = Self.hiddenSize
        // [stream][layer][unit] here, [layer][stream][unit] for the model.
        var batchState = [Float](repeating: 0, count: states.count)
        for stream in 0 ..< count {
            for layer in 0 ..< 2 {
                for unit in 0 ..< hidden {
                    batchState[(layer * count + stream) * hidden + unit] = states[stream * Self.stateSize + layer * hidden + unit]
                }
            }
        }
        let runner = try take()
        defer { idle.withLock { $0.append(runner) } }
        let outputs: [[Float]]
        do {
            outputs = try windows.withUnsafeBufferPointer { audio throws(OnnxRuntimeError) in
                try batchState.withUnsafeBufferPointer { state throws(OnnxRuntimeError) in
                    try [Int64(16_000)].withUnsafeBufferPointer { rate throws(OnnxRuntimeError) in
                        try runner.run(
                            inputs: [.float(name: "input", values: audio, shape: [count, windowSamples]),
                                     .float(name: "state", values: state, shape: [2, count, hidden]),
                                     .int64(name: "sr", values: rate, shape: [1])],
                            outputs: [("output", count), ("stateN", 2 * count * hidden)])
                    }
                }
            }
        } catch {
            throw VoiceActivityError(.runFailed, error.message)
        }
        guard outputs[0].count == count, outputs[1].count == batchState.count else {
            throw VoiceActivityError(.runFailed, "silero gave \(outputs[0].count) probabilities and \(outputs[1].count) state values for \(count) windows")
        }
        for stream in 0 ..< count {
            for layer in 0 ..< 2 {
                for unit in 0 ..< hidden {
                    states[stream * Self.stateSize + layer * hidden + unit] = outputs[1][(layer * count + stream) * hidden + unit]
                }
            }
        }
        return outputs[0]
    }

    private func take() throws(VoiceActivityError) -> OnnxModelRunner {
        if let runner = idle.withLock({ $0.popLast() }) { return runner }
        return try Self.open(modelPath: modelPath, libraryPath: libraryPath)
    }
}
