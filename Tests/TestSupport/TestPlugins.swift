import ChildProcesses
import Foundation

/// Plugin folders for tests: copies of the plugins the package built, and the test-only `faulty`
/// provider (faulty_plugin.c beside this file), compiled here with the system C compiler into a
/// temporary folder so it never sits beside the real plugins.
public enum TestPlugins {
    static let supportDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    public static let packageRoot = supportDirectory.deletingLastPathComponent().deletingLastPathComponent()

    public static var abiIncludeDirectory: String {
        packageRoot.appendingPathComponent("Sources/CSpeakerSyncPluginABI/include").path
    }

    /// A plugin the package built (`speakersync-energy`, `speakersync-speakerkit`), found beside the
    /// test binary (`swift build --build-tests` puts both in .build/<config>/).
    public static func built(_ name: String) throws -> URL {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var folder = exe.deletingLastPathComponent()
        for _ in 0 ..< 4 {
            let candidate = folder.appendingPathComponent("lib\(name).so")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        throw TestPluginError("lib\(name).so not found near \(exe.path); run `swift build --build-tests` first")
    }

    /// A new temporary folder holding copies of the named built plugins and, if asked, the faulty one
    /// and the `forbidden` one (forbidden_plugin.c: the provider sandbox's probe). The caller removes it.
    public static func folder(copying names: [String], faulty: Bool, forbidden: Bool = false) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-plugins-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in names {
            try FileManager.default.copyItem(at: try built(name), to: folder.appendingPathComponent("lib\(name).so"))
        }
        if faulty {
            try compile(source: supportDirectory.appendingPathComponent("faulty_plugin.c"), to: folder.appendingPathComponent("libfaulty.so"))
        }
        if forbidden {
            try compile(source: supportDirectory.appendingPathComponent("forbidden_plugin.c"), to: folder.appendingPathComponent("libforbidden.so"))
        }
        return folder
    }

    /// Compiles one C source into a shared library against the plugin ABI header.
    public static func compile(source: URL, to output: URL) throws {
        let done = try Subprocess.run(Subprocess.Configuration(
            executable: "/usr/bin/env", arguments: ["cc", "-shared", "-fPIC", "-std=c99", "-O1", "-I", abiIncludeDirectory, "-o", output.path, source.path]))
        guard done.exit.succeeded else {
            throw TestPluginError("cc \(source.lastPathComponent) failed: \(done.standardErrorText)")
        }
    }

    /// Compiles C source text into `folder/name`.
    public static func compile(text: String, named name: String, in folder: URL) throws {
        let source = folder.appendingPathComponent(name + ".c")
        try text.write(to: source, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: source) }
        try compile(source: source, to: folder.appendingPathComponent(name))
    }
}

public struct TestPluginError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
