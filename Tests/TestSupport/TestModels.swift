import ChildProcesses
import Foundation
import Synchronization

/// Stand-in ONNX models for sherpa-onnx's speaker APIs, generated once per test process by
/// scripts/python/make_sherpa_test_models.py with the test venv's Python (SPEAKERSYNC_TEST_PYTHON, with
/// the `onnx` package scripts/test installs). Untrained: they exercise loading, shapes and every code
/// path with the real library; their outputs mean little.
public enum TestModels {
    private static let folder = Mutex<Result<URL, TestPluginError>?>(nil)

    /// The folder holding segmentation.onnx, embedding.onnx, embedding-3dspeaker.onnx and bad-*.onnx.
    public static func sherpaOnnx() throws -> URL {
        try folder.withLock { cached in
            if let cached { return try cached.get() }
            let result: Result<URL, TestPluginError>
            do throws(TestPluginError) {
                result = .success(try generate())
            } catch {
                result = .failure(error)
            }
            cached = result
            return try result.get()
        }
    }

    private static func generate() throws(TestPluginError) -> URL {
        guard let python = ProcessInfo.processInfo.environment["SPEAKERSYNC_TEST_PYTHON"], !python.isEmpty else {
            throw TestPluginError("SPEAKERSYNC_TEST_PYTHON is unset: run the tests with scripts/test (it makes .venv-test with onnx)")
        }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-models-\(getpid())")
        try? FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let script = TestPlugins.packageRoot.appendingPathComponent("scripts/python/make_sherpa_test_models.py")
        let done: Subprocess.Completed
        do {
            done = try Subprocess.run(Subprocess.Configuration(executable: python, arguments: [script.path, out.path]))
        } catch {
            throw TestPluginError("cannot run \(python): \(error)")
        }
        guard done.exit.succeeded else {
            throw TestPluginError("make_sherpa_test_models.py failed (is onnx installed in the test venv?): \(done.standardErrorText)")
        }
        return out
    }
}
