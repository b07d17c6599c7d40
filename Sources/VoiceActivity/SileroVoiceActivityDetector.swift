import Foundation
import Logging
import Synchronization

/// Streaming voice activity detection with the silero model, for one audio stream. The model runs on
/// onnxruntime here (`VADEngine.onnxRuntime`, the default: `SileroBatch` can then run many streams'
/// windows in one call) or inside sherpa-onnx's own detector (`.sherpaOnnx`, dlopen'd, see
/// `SherpaOnnxLibrary`); both give the same segments (`SileroSpeechGate` mirrors sherpa-onnx's rules).
///
/// Audio may arrive in chunks of any size: it is cut into model windows here, because sherpa-onnx
/// decides speech per *call* (a call holding many windows counts as speech if any window is), so feeding
/// it whole windows one at a time is what makes the result independent of the chunking.
///
/// Two views of speech, for two latencies:
/// - `isSpeechActive` / `ongoingSpeechStartSeconds`: updated every window (32 ms), under two windows behind
///   the audio received; a streaming diarizer can start embedding speech before the segment closes.
/// - `popSegments()`: closed segments, `minSilenceDurationSeconds` after the speech ended.
///
/// Thread-safe (calls are serialised by a lock), but meant for one stream fed from one queue.
public final class SileroVoiceActivityDetector: Sendable {
    public let config: VADConfig
    /// The sherpa-onnx release in use.
    public let libraryVersion: String

    let state: Mutex<State>
    private let logger: Logger

    /// What classifies the windows.
    enum Engine {
        case sherpaOnnx(VoiceActivityDetectorHandle)
        case onnxRuntime(SileroStream)
    }

    struct State {
        let engine: Engine
        var tracker: SpeechRegionTracker
        var window: [Float]
        var windowFill = 0
        var ready: [SpeechSegment] = []
        var replacedNonFiniteSamples = 0
    }

    /// Loads the library (once per process and folder) and creates the detector.
    public init(config: VADConfig = .default, logger: Logger) throws(VoiceActivityError) {
        try config.validate()
        if !Self.isReadableFile(config.modelPath) {
            throw VoiceActivityError(
                .modelNotFound,
                "no readable model at \(config.modelPath): run scripts/setup (it puts silero_vad.onnx in vendor/models) "
                    + "or set \(VendorLocation.modelsEnvironmentVariable) to the folder holding \(VendorLocation.sileroModelFileName)")
        }
        let engine: Engine
        switch config.engine {
        case .sherpaOnnx:
            let library = try SherpaOnnxLibrary.load(directory: config.libraryDirectory)
            engine = .sherpaOnnx(try VoiceActivityDetectorHandle(library: library, config: config))
            libraryVersion = library.version
        case .onnxRuntime:
            engine = .onnxRuntime(SileroStream(model: try SileroModel.shared(config), config: config))
            libraryVersion = "onnxruntime"
        }
        self.config = config
        self.logger = logger
        self.state = Mutex(State(
            engine: engine, tracker: SpeechRegionTracker(config: config),
            window: [Float](repeating: 0, count: config.windowSizeSamples)))
        logger.debug(
            "silero VAD ready",
            metadata: [
                "engine": "\(config.engine.rawValue)", "library": "\(config.libraryDirectory)", "model": "\(config.modelPath)",
                "threshold": "\(config.threshold)",
            ])
    }

    /// Feed the next samples (mono, `config.sampleRate`, [-1, 1]). Non-finite samples are read as 0.
    public func accept(samples: [Float]) {
        samples.withUnsafeBufferPointer { accept(samples: $0) }
    }

    /// Feed without copying: the buffer is read only during the call.
    public func accept(samples: UnsafeBufferPointer<Float>) {
        let firstNonFinite = state.withLock { state in
            let replacedBefore = state.replacedNonFiniteSamples
            if case .onnxRuntime(let stream) = state.engine { stream.beginAccept(samples: samples) }
            defer { if case .onnxRuntime(let stream) = state.engine { stream.endAccept() } }
            state.tracker.received(sampleCount: samples.count)
            let size = state.window.count
            var index = 0
            while index < samples.count {
                let take = min(size - state.windowFill, samples.count - index)
                for offset in 0..<take {
                    let sample = samples[index + offset]
                    if sample.isFinite {
                        state.window[state.windowFill + offset] = sample
                    } else {
                        state.window[state.windowFill + offset] = 0
                        state.replacedNonFiniteSamples += 1
                    }
                }
                state.windowFill += take
                index += take
                if state.windowFill == size {
                    Self.feedWindow(&state)
                }
            }
            return replacedBefore == 0 && state.replacedNonFiniteSamples > 0
        }
        if firstNonFinite {
            logger.warning("non-finite audio samples read as 0 (logged once per detector; see replacedNonFiniteSampleCount)")
        }
    }

    /// Closed segments since the last call, in time order, on the stream's timeline.
    public func popSegments() -> [SpeechSegment] {
        state.withLock { state in
            defer { state.ready.removeAll(keepingCapacity: true) }
            return state.ready
        }
    }

    /// Close the ongoing segment now (end of stream, or a pause the caller knows about), padded to the
    /// audio received. The last partial window and the model's look-ahead (under 2 windows, 68 ms) are not
    /// classified. The stream may continue afterwards on the same timeline.
    public func flush() {
        state.withLock { state in
            switch state.engine {
            case .sherpaOnnx(let handle): handle.flush()
            case .onnxRuntime(let stream): stream.flush()
            }
            state.tracker.flushed()
            Self.collect(&state, limitSample: state.tracker.receivedSamples)
        }
    }

    /// Forget the stream: the next sample is time 0 again. Segments not yet popped are dropped.
    public func reset() {
        state.withLock { state in
            switch state.engine {
            case .sherpaOnnx(let handle): handle.reset()
            case .onnxRuntime(let stream): stream.reset()
            }
            state.tracker = SpeechRegionTracker(config: config)
            state.windowFill = 0
            state.ready.removeAll()
        }
    }

    /// Whether speech is going on at `analyzedSeconds` (a segment is open).
    public var isSpeechActive: Bool { state.withLock { $0.tracker.isSpeechActive } }

    /// Where the ongoing speech started, as its segment will report it; nil outside speech.
    public var ongoingSpeechStartSeconds: Double? { state.withLock { $0.tracker.ongoingSpeechStartSeconds } }

    /// How far the model has classified the stream: `isSpeechActive` describes the audio up to here.
    public var analyzedSeconds: Double {
        state.withLock { Double($0.tracker.analyzedSamples) / Double(config.sampleRate) }
    }

    /// How much audio `accept` has been given since creation or `reset()`.
    public var receivedSeconds: Double {
        state.withLock { Double($0.tracker.receivedSamples) / Double(config.sampleRate) }
    }

    /// Model windows so far whose probability `SileroBatch` computed ahead, and windows run one at a
    /// time at accept (both 0 on sherpa-onnx's engine).
    public var windowCounts: (computedAhead: Int, runAlone: Int) {
        state.withLock { state in
            guard case .onnxRuntime(let stream) = state.engine else { return (0, 0) }
            return (stream.windowsComputedAhead, stream.windowsRunHere)
        }
    }

    /// Samples that were NaN or infinite and were read as 0 (a bug upstream, counted rather than logged per call).
    public var replacedNonFiniteSampleCount: Int { state.withLock { $0.replacedNonFiniteSamples } }

    private static func isReadableFile(_ path: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && !isFolder.boolValue
            && FileManager.default.isReadableFile(atPath: path)
    }

    // MARK: - Helpers (called with the lock held)

    private static func feedWindow(_ state: inout State) {
        let speechDetected: Bool
        switch state.engine {
        case .sherpaOnnx(let handle):
            state.window.withUnsafeBufferPointer { handle.accept($0) }
            speechDetected = handle.isSpeechDetected
        case .onnxRuntime(let stream):
            state.window.withUnsafeBufferPointer { stream.feed(step: $0) }
            speechDetected = stream.gate.isSpeechDetected
        }
        state.windowFill = 0
        state.tracker.windowFed(speechDetected: speechDetected)
        collect(&state, limitSample: state.tracker.analyzedSamples)
    }

    private static func collect(_ state: inout State, limitSample: Int) {
        let raws = switch state.engine {
        case .sherpaOnnx(let handle): handle.popSegments()
        case .onnxRuntime(let stream): stream.popSegments()
        }
        for raw in raws {
            if let segment = state.tracker.closed(
                startSample: Int(raw.startSample), sampleCount: raw.sampleCount, limitSample: limitSample)
            {
                state.ready.append(segment)
            }
        }
    }
}
