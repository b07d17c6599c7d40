import Foundation
import Synchronization

/// The test double of Picovoice Falcon's library (falcon_double.c beside this file), compiled once per
/// test process into a temporary folder, and the vendored real library when scripts/setup installed it.
public enum FalconDouble {
    private static let compiled = Mutex<Result<URL, TestPluginError>?>(nil)

    /// The double's path (libpv_falcon_double.so). Its behaviour follows the AccessKey: "double-ok",
    /// "double-activation-fails", "double-process-fails-N" (see the C file).
    public static func library() throws -> URL {
        try compiled.withLock { cached in
            if let cached { return try cached.get() }
            let result: Result<URL, TestPluginError>
            do {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-falcon-double-\(getpid())")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                let output = folder.appendingPathComponent("libpv_falcon_double.so")
                try TestPlugins.compile(source: TestPlugins.supportDirectory.appendingPathComponent("falcon_double.c"), to: output)
                result = .success(output)
            } catch let error as TestPluginError {
                result = .failure(error)
            } catch {
                result = .failure(TestPluginError("cannot compile falcon_double.c: \(error)"))
            }
            cached = result
            return try result.get()
        }
    }

    /// A file standing for Falcon's model (the double never reads it; the plugin checks it exists).
    public static func model() throws -> URL {
        let url = try library().deletingLastPathComponent().appendingPathComponent("falcon_params_double.pv")
        if !FileManager.default.fileExists(atPath: url.path) { try Data("double".utf8).write(to: url) }
        return url
    }

    /// The real libpv_falcon.so and falcon_params.pv scripts/setup put in vendor/picovoice. Throws with
    /// what to do when they are missing.
    public static func vendored() throws -> (library: URL, model: URL) {
        let root = TestPlugins.packageRoot.appendingPathComponent("vendor/picovoice")
        let library = root.appendingPathComponent("lib/libpv_falcon.so"), model = root.appendingPathComponent("models/falcon_params.pv")
        guard FileManager.default.fileExists(atPath: library.path), FileManager.default.fileExists(atPath: model.path) else {
            throw TestPluginError("Picovoice Falcon is not vendored at \(root.path): run scripts/setup (it installs PyPI pvfalcon 2.0.1)")
        }
        return (library, model)
    }
}
