import ChildProcesses
import Foundation

/// Locates the shared real-audio folder: $SPEAKERSYNC_TEST_DATA, else the first `shared/data` found
/// walking up from this source file (worktrees live next to /work/shared).
enum TestData {
    static let folder: URL = {
        if let env = ProcessInfo.processInfo.environment["SPEAKERSYNC_TEST_DATA"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("shared/data")
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("sample").path) {
                return candidate
            }
            dir = dir.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: "/work/shared/data")
    }()

    static var sampleWAV: URL { folder.appendingPathComponent("sample/sample.wav") }
    static var dev00WAV: URL { folder.appendingPathComponent("ami-dev/dev00.wav") }

    static func temporaryURL(_ name: String) -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("speakersync-audio-\(ProcessInfo.processInfo.processIdentifier)-\(name)")
    }

    /// Runs sox (an independent WAV writer) to convert `input` with the given output options.
    static func sox(_ input: URL, _ outputOptions: [String], output: URL) throws {
        let done = try Subprocess.run(Subprocess.Configuration(executable: "/usr/bin/sox", arguments: [input.path] + outputOptions + [output.path]))
        guard done.exit.succeeded else {
            throw CocoaError(.fileWriteUnknown)
        }
    }

    static func rms(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }
}
