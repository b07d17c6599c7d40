import Foundation
import Testing
import VoiceActivity

/// Set-up failures are thrown with their code, never a crash. The library tests are sherpa-onnx's
/// (its C API library beside onnxruntime).
@Suite("VAD set-up errors")
struct VoiceActivityErrorTests {
    static func temporaryFolder() throws -> String {
        let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("speakersync-vad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func code(_ config: VADConfig) -> VoiceActivityError.Code? {
        do {
            _ = try SileroVoiceActivityDetector(config: config, logger: Recordings.quietLogger)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func missingLibraryFolder() throws {
        var config = VADConfig.default
        config.engine = .sherpaOnnx
        config.libraryDirectory = "/nonexistent/speakersync/sherpa-onnx/lib"
        #expect(Self.code(config) == .libraryNotFound)
    }

    @Test func folderWithoutTheLibrary() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var config = VADConfig.default
        config.engine = .sherpaOnnx
        config.libraryDirectory = folder
        #expect(Self.code(config) == .libraryNotFound)
    }

    @Test func libraryFilesThatAreNotLibraries() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["libsherpa-onnx-c-api.so", "libonnxruntime.so"] {
            try Data("not an ELF file".utf8).write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent(name)))
        }
        var config = VADConfig.default
        config.engine = .sherpaOnnx
        config.libraryDirectory = folder
        do {
            _ = try SileroVoiceActivityDetector(config: config, logger: Recordings.quietLogger)
            Issue.record("a text file loaded as a library")
        } catch {
            #expect(error.code == .libraryLoadFailed)
            #expect(error.message.contains(folder))
        }
    }

    /// A real shared library without sherpa-onnx's functions (zlib), beside the real onnxruntime.
    @Test func libraryWithoutTheFunctions() throws {
        let vendor = VADConfig.default.libraryDirectory
        let runtime = (vendor as NSString).appendingPathComponent("libonnxruntime.so")
        try #require(FileManager.default.fileExists(atPath: runtime), "run scripts/setup to install vendor/")
        let zlib = try #require(
            ["/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/aarch64-linux-gnu/libz.so.1"]
                .first { FileManager.default.fileExists(atPath: $0) })
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createSymbolicLink(atPath: "\(folder)/libonnxruntime.so", withDestinationPath: runtime)
        try FileManager.default.createSymbolicLink(atPath: "\(folder)/libsherpa-onnx-c-api.so", withDestinationPath: zlib)
        var config = VADConfig.default
        config.engine = .sherpaOnnx
        config.libraryDirectory = folder
        #expect(Self.code(config) == .missingSymbol)
    }

    /// The onnxruntime engine looks for libonnxruntime.so only (and opens it once per process, so a
    /// library that is not one is found by the sherpa-onnx tests above, in a process that opens nothing else).
    @Test func onnxRuntimeEngineWithoutItsLibrary() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var config = VADConfig.default
        config.engine = .onnxRuntime
        config.libraryDirectory = folder
        #expect(Self.code(config) == .libraryNotFound)
    }

    @Test func missingModel() throws {
        var config = VADConfig.default
        config.modelPath = "/nonexistent/speakersync/silero_vad.onnx"
        #expect(Self.code(config) == .modelNotFound)
    }

    @Test func modelThatIsNotAnONNXModel() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = (folder as NSString).appendingPathComponent("silero_vad.onnx")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: URL(fileURLWithPath: path))
        var config = VADConfig.default
        config.modelPath = path
        #expect(Self.code(config) == .createFailed)
    }

    /// Values sherpa-onnx would answer by exiting the process are refused before it sees them.
    @Test(arguments: [
        { (config: inout VADConfig) in config.sampleRate = 8_000 },
        { (config: inout VADConfig) in config.windowSizeSamples = 256 },
        { (config: inout VADConfig) in config.threshold = 1.5 },
        { (config: inout VADConfig) in config.minSilenceDurationSeconds = 0 },
        { (config: inout VADConfig) in config.speechPadSeconds = -1 },
        { (config: inout VADConfig) in config.numThreads = 0 },
    ] as [@Sendable (inout VADConfig) -> Void])
    func invalidConfig(change: @Sendable (inout VADConfig) -> Void) throws {
        var config = VADConfig.default
        change(&config)
        #expect(Self.code(config) == .invalidConfig)
    }
}
