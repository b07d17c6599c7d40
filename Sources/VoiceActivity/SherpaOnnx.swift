#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSherpaOnnxVAD
import Foundation
import Synchronization

/// sherpa-onnx's C library, opened with dlopen from a folder at run time: every call into it is here.
///
/// Why dlopen rather than linking: the package must build (and every other module work) without the
/// vendored binaries, and a missing or wrong library must become a `VoiceActivityError` that names the
/// folder, not a loader failure at process start. libonnxruntime.so is opened first by absolute path,
/// so the C API library's NEEDED entry is satisfied by the copy beside it whatever its RPATH says.
///
/// A library is opened once per folder and kept for the life of the process (a process-wide cache):
/// onnxruntime keeps global state (its environment, thread pools) that is not meant to be unloaded and
/// loaded again, and detectors come and go with sessions. Immutable after loading, so any thread may
/// call it; the per-detector rules are the caller's (see `SileroVoiceActivityDetector`). Other parts of
/// sherpa-onnx's C API (speaker embeddings and diarization, module SherpaOnnxSpeakers) look their
/// functions up in the same opened library (`function(_:as:)`), so one version check covers them all.
public final class SherpaOnnxLibrary: @unchecked Sendable {
    public let directory: String
    /// SherpaOnnxGetVersionStr(), checked equal to the version the C declarations mirror.
    public let version: String

    private let runtimeHandle: UnsafeMutableRawPointer
    private let handle: UnsafeMutableRawPointer
    private let createFunction: SherpaOnnxCreateVoiceActivityDetectorFn
    private let destroyFunction: SherpaOnnxDestroyVoiceActivityDetectorFn
    private let acceptWaveformFunction: SherpaOnnxVoiceActivityDetectorAcceptWaveformFn
    private let emptyFunction: SherpaOnnxVoiceActivityDetectorEmptyFn
    private let detectedFunction: SherpaOnnxVoiceActivityDetectorDetectedFn
    private let frontFunction: SherpaOnnxVoiceActivityDetectorFrontFn
    private let popFunction: SherpaOnnxVoiceActivityDetectorPopFn
    private let destroySegmentFunction: SherpaOnnxDestroySpeechSegmentFn
    private let resetFunction: SherpaOnnxVoiceActivityDetectorResetFn
    private let flushFunction: SherpaOnnxVoiceActivityDetectorFlushFn
    /// Held around every create and destroy of a sherpa-onnx object (detector, extractor, diarizer).
    /// Why: each of those builds or releases onnxruntime's process-wide environment (reference counted,
    /// with one default logging manager), and a create racing a destroy on another thread can find the
    /// old logging manager still registered: onnxruntime then refuses with "Only one instance of
    /// LoggingManager created with InstanceType::Default can exist" and the model fails to load. Seen
    /// in CI when two suites made and dropped models at once. Inference calls do not take it.
    private let lifecycleLock = NSLock()

    /// The layout sherpa_onnx_vad.h mirrors; another release may have moved struct members.
    static let supportedVersion = SPEAKERSYNC_SHERPA_ONNX_VERSION

    private static let loaded = Mutex<[String: SherpaOnnxLibrary]>([:])

    /// The library in `directory`, opened on first use.
    public static func load(directory: String) throws(VoiceActivityError) -> SherpaOnnxLibrary {
        let key = (directory as NSString).resolvingSymlinksInPath
        return try loaded.withLock { (libraries) throws(VoiceActivityError) -> SherpaOnnxLibrary in
            if let library = libraries[key] { return library }
            let library = try SherpaOnnxLibrary(directory: key)
            libraries[key] = library
            return library
        }
    }

    private init(directory: String) throws(VoiceActivityError) {
        let files = FileManager.default
        var isFolder: ObjCBool = false
        guard files.fileExists(atPath: directory, isDirectory: &isFolder), isFolder.boolValue else {
            throw VoiceActivityError(
                .libraryNotFound,
                "no folder \(directory): run scripts/setup (it installs sherpa-onnx into vendor/) "
                    + "or set \(VendorLocation.libraryEnvironmentVariable) to the folder holding \(VendorLocation.libraryFileName)")
        }
        let runtimePath = (directory as NSString).appendingPathComponent(VendorLocation.onnxRuntimeFileName)
        let libraryPath = (directory as NSString).appendingPathComponent(VendorLocation.libraryFileName)
        for path in [libraryPath, runtimePath] where !files.fileExists(atPath: path) {
            throw VoiceActivityError(
                .libraryNotFound,
                "\(path) does not exist: run scripts/setup or set \(VendorLocation.libraryEnvironmentVariable) "
                    + "to a folder holding \(VendorLocation.libraryFileName) and \(VendorLocation.onnxRuntimeFileName)")
        }
        let runtimeHandle = try Self.open(runtimePath)
        let handle: UnsafeMutableRawPointer
        do {
            handle = try Self.open(libraryPath)
        } catch {
            dlclose(runtimeHandle)
            throw error
        }
        func close() {
            dlclose(handle)
            dlclose(runtimeHandle)
        }
        func symbol<T>(_ name: String, as type: T.Type) throws(VoiceActivityError) -> T {
            guard let address = dlsym(handle, name) else {
                close()
                throw VoiceActivityError(.missingSymbol, "\(libraryPath) has no function \(name)")
            }
            return unsafeBitCast(address, to: type)
        }
        let versionFunction = try symbol("SherpaOnnxGetVersionStr", as: SherpaOnnxGetVersionStrFn.self)
        let version = versionFunction().map { String(cString: $0) } ?? ""
        guard version == Self.supportedVersion else {
            close()
            throw VoiceActivityError(
                .unsupportedLibraryVersion,
                "\(libraryPath) is sherpa-onnx \(version.isEmpty ? "(unknown version)" : version); this build mirrors "
                    + "the C structs of \(Self.supportedVersion): run scripts/setup to install that version")
        }
        createFunction = try symbol("SherpaOnnxCreateVoiceActivityDetector", as: SherpaOnnxCreateVoiceActivityDetectorFn.self)
        destroyFunction = try symbol("SherpaOnnxDestroyVoiceActivityDetector", as: SherpaOnnxDestroyVoiceActivityDetectorFn.self)
        acceptWaveformFunction = try symbol(
            "SherpaOnnxVoiceActivityDetectorAcceptWaveform", as: SherpaOnnxVoiceActivityDetectorAcceptWaveformFn.self)
        emptyFunction = try symbol("SherpaOnnxVoiceActivityDetectorEmpty", as: SherpaOnnxVoiceActivityDetectorEmptyFn.self)
        detectedFunction = try symbol("SherpaOnnxVoiceActivityDetectorDetected", as: SherpaOnnxVoiceActivityDetectorDetectedFn.self)
        frontFunction = try symbol("SherpaOnnxVoiceActivityDetectorFront", as: SherpaOnnxVoiceActivityDetectorFrontFn.self)
        popFunction = try symbol("SherpaOnnxVoiceActivityDetectorPop", as: SherpaOnnxVoiceActivityDetectorPopFn.self)
        destroySegmentFunction = try symbol("SherpaOnnxDestroySpeechSegment", as: SherpaOnnxDestroySpeechSegmentFn.self)
        resetFunction = try symbol("SherpaOnnxVoiceActivityDetectorReset", as: SherpaOnnxVoiceActivityDetectorResetFn.self)
        flushFunction = try symbol("SherpaOnnxVoiceActivityDetectorFlush", as: SherpaOnnxVoiceActivityDetectorFlushFn.self)
        self.directory = directory
        self.version = version
        self.runtimeHandle = runtimeHandle
        self.handle = handle
    }

    private static func open(_ path: String) throws(VoiceActivityError) -> UnsafeMutableRawPointer {
        _ = dlerror()
        // RTLD_NODELETE: onnxruntime is C++ with static and thread_local state; its mapping must outlive
        // every handle, as the plugin libraries' must (LoadedPlugin).
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            throw VoiceActivityError(.libraryLoadFailed, "dlopen \(path): \(reason)")
        }
        return handle
    }

    /// Runs `body` (a create or destroy of a sherpa-onnx object) while no other thread creates or
    /// destroys one; see `lifecycleLock` for why.
    public func serialisingLifecycle<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lifecycleLock.lock()
        defer { lifecycleLock.unlock() }
        return try body()
    }

    /// A function of the library, for the parts of its C API other modules call; throws
    /// `missingSymbol` naming it when this build of the library lacks it.
    public func function<T>(_ name: String, as type: T.Type) throws(VoiceActivityError) -> T {
        guard let address = dlsym(handle, name) else {
            throw VoiceActivityError(.missingSymbol, "\((directory as NSString).appendingPathComponent(VendorLocation.libraryFileName)) has no function \(name)")
        }
        return unsafeBitCast(address, to: type)
    }

    // MARK: - Detector calls

    /// A new detector; the model path and provider strings live only for the duration of the call
    /// (sherpa-onnx copies them into its own config).
    func createDetector(_ config: VADConfig, bufferSeconds: Float) throws(VoiceActivityError) -> OpaquePointer {
        let detector = config.modelPath.withCString { model in
            config.provider.withCString { provider in
                var raw = SherpaOnnxVadModelConfig()  // zeroed: ten_vad stays empty, debug off
                raw.silero_vad.model = model
                raw.silero_vad.threshold = config.threshold
                raw.silero_vad.min_silence_duration = Float(config.minSilenceDurationSeconds)
                raw.silero_vad.min_speech_duration = Float(config.minSpeechDurationSeconds)
                raw.silero_vad.window_size = Int32(config.windowSizeSamples)
                raw.silero_vad.max_speech_duration = Float(config.maxSpeechDurationSeconds)
                raw.sample_rate = Int32(config.sampleRate)
                raw.num_threads = Int32(config.numThreads)
                raw.provider = provider
                raw.debug = 0
                return serialisingLifecycle { createFunction(&raw, bufferSeconds) }
            }
        }
        guard let detector else {
            throw VoiceActivityError(
                .createFailed,
                "sherpa-onnx could not create a detector from \(config.modelPath) (it printed the reason on stderr); "
                    + "is it silero_vad.onnx from the silero-vad wheel?")
        }
        return detector
    }

    func destroyDetector(_ detector: OpaquePointer) {
        serialisingLifecycle { destroyFunction(detector) }
    }

    /// `samples.count` must fit in Int32; callers pass one window at a time.
    func acceptWaveform(_ detector: OpaquePointer, _ samples: UnsafeBufferPointer<Float>) {
        acceptWaveformFunction(detector, samples.baseAddress, Int32(samples.count))
    }

    /// Whether a segment is open (speech seen and not yet followed by the minimum silence).
    func isSpeechDetected(_ detector: OpaquePointer) -> Bool {
        detectedFunction(detector) != 0
    }

    /// Takes every closed segment out of the detector's queue, as (first sample, sample count).
    func popSegments(_ detector: OpaquePointer) -> [(startSample: Int64, sampleCount: Int)] {
        var segments: [(startSample: Int64, sampleCount: Int)] = []
        while emptyFunction(detector) == 0 {
            if let segment = frontFunction(detector) {
                segments.append((segment.pointee.start, Int(segment.pointee.n)))
                destroySegmentFunction(segment)
            }
            popFunction(detector)
        }
        return segments
    }

    func flush(_ detector: OpaquePointer) {
        flushFunction(detector)
    }

    func reset(_ detector: OpaquePointer) {
        resetFunction(detector)
    }
}
