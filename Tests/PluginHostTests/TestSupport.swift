import ChildProcesses
import Foundation
import Testing

/// Paths, processes and WAV decoding for the plugin host tests. Private to this test target.
enum TestSupport {
    /// Repository root, found from this file's path (Tests/PluginHostTests/TestSupport.swift).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var abiIncludeDirectory: String {
        packageRoot.appendingPathComponent("Sources/CSpeakerSyncPluginABI/include").path
    }

    /// `$SPEAKERSYNC_TEST_DATA`, else the first `shared/data` folder found walking up from this file.
    static func dataDirectory() throws -> URL {
        if let env = ProcessInfo.processInfo.environment["SPEAKERSYNC_TEST_DATA"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("shared/data")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        throw TestFailure("no shared/data folder above \(#filePath); set SPEAKERSYNC_TEST_DATA")
    }

    /// The real libspeakersync-energy built by the package, next to the test bundle executable
    /// (`swift build --build-tests` / `swift test` put both in .build/<config>/).
    static func energyPluginPath() throws -> String {
        var starts: [URL] = []
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        if FileManager.default.fileExists(atPath: exe.path) { starts.append(exe.deletingLastPathComponent()) }
        starts.append(Bundle.main.bundleURL)
        starts += Bundle.allBundles.map(\.bundleURL)
        for start in starts {
            var dir = start
            for _ in 0..<4 {
                for name in ["libspeakersync-energy.so", "libspeakersync-energy.dylib"] {
                    let candidate = dir.appendingPathComponent(name)
                    if FileManager.default.fileExists(atPath: candidate.path) { return candidate.path }
                }
                dir = dir.deletingLastPathComponent()
            }
        }
        throw TestFailure("libspeakersync-energy not found next to the test bundle; run `swift build --build-tests` first")
    }

    /// A fresh temporary folder, removed by the caller.
    static func makeTemporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-plugins-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A temporary folder holding a copy of the energy plugin. A copy (not the build output itself) so each
    /// test loads its own instance of the library, with its own globals.
    static func folderWithEnergyPlugin() throws -> URL {
        let dir = try makeTemporaryDirectory()
        try FileManager.default.copyItem(
            atPath: try energyPluginPath(), toPath: dir.appendingPathComponent("libspeakersync-energy.so").path)
        return dir
    }

    /// Run a program found on PATH; throws with its stderr when it fails.
    static func run(_ program: String, _ arguments: [String]) throws {
        let done = try Subprocess.run(Subprocess.Configuration(executable: "/usr/bin/env", arguments: [program] + arguments))
        guard done.exit.succeeded else {
            throw TestFailure("\(program) \(arguments.joined(separator: " ")) failed (\(done.exit)): \(done.standardErrorText)")
        }
    }

    /// Compile one C file into a shared library with the system C compiler.
    static func compileSharedLibrary(source: String, to output: URL) throws {
        let file = output.deletingPathExtension().appendingPathExtension("c")
        try source.write(to: file, atomically: true, encoding: .utf8)
        try run("cc", ["-shared", "-fPIC", "-std=c99", "-I", abiIncludeDirectory, "-o", output.path, file.path])
        try FileManager.default.removeItem(at: file)
    }

    /// Mono 16-bit PCM WAV → float samples in [-1, 1), and its sample rate.
    static func readPCM16WAV(_ url: URL) throws -> (samples: [Float], sampleRate: Int) {
        let data = try Data(contentsOf: url)
        let bytes = [UInt8](data)
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
            throw TestFailure("\(url.path): not a RIFF/WAVE file")
        }
        var offset = 12
        var sampleRate = 0
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            if id == "fmt " {
                guard u16(body) == 1, u16(body + 2) == 1, u16(body + 14) == 16 else {
                    throw TestFailure("\(url.path): only mono 16-bit PCM is supported here")
                }
                sampleRate = u32(body + 4)
            } else if id == "data" {
                guard sampleRate > 0 else { throw TestFailure("\(url.path): data before fmt") }
                let end = min(body + size, bytes.count)
                var samples: [Float] = []
                samples.reserveCapacity((end - body) / 2)
                var i = body
                while i + 1 < end {
                    samples.append(Float(Int16(bitPattern: UInt16(u16(i)))) / 32768)
                    i += 2
                }
                return (samples, sampleRate)
            }
            offset = body + size + (size & 1)
        }
        throw TestFailure("\(url.path): no data chunk")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
