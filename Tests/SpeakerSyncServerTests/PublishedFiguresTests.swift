import ChildProcesses
import Foundation
import Logging
import PluginHost
import Testing
import TestSupport

/// What speakerkit's descriptor and the README publish is what scripts/publish-figures wrote from the
/// reports it keeps in docs/measured/: regenerating from those reports changes nothing, and the loaded
/// plugin's `measured` text carries the reports' figures (a figure typed by hand fails here).
struct PublishedFiguresTests {
    static let root = TestPlugins.packageRoot

    @Test func theGeneratedFilesAreThoseOfTheKeptReports() throws {
        let python = ProcessInfo.processInfo.environment["SPEAKERSYNC_TEST_PYTHON"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/bin/python3"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-figures-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let swift = folder.appendingPathComponent("SpeakerKitMeasured.swift"), readme = folder.appendingPathComponent("README.md")
        try FileManager.default.copyItem(at: Self.root.appendingPathComponent("README.md"), to: readme)
        let done = try Subprocess.run(Subprocess.Configuration(
            executable: python, arguments: [Self.root.appendingPathComponent("scripts/python/publish_figures.py").path,
                                            "--measured", Self.root.appendingPathComponent("docs/measured").path, "--swift", swift.path, "--readme", readme.path]))
        try #require(done.exit.succeeded, "\(done.exit): \(done.standardErrorText)")
        #expect(try Data(contentsOf: swift) == Data(contentsOf: Self.root.appendingPathComponent("Plugins/SpeakerKit/SpeakerKitMeasured.swift")),
                "SpeakerKitMeasured.swift differs from what docs/measured gives: run scripts/publish-figures --write-only")
        #expect(try Data(contentsOf: readme) == Data(contentsOf: Self.root.appendingPathComponent("README.md")),
                "README's measured block differs from what docs/measured gives: run scripts/publish-figures --write-only")
    }

    @Test func theLoadedDescriptorCarriesTheReportsFigures() throws {
        let report = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.root.appendingPathComponent("docs/measured/eval-speakerkit-ami-dev.json"))) as? [String: Any]
        let der = try #require(((report?["overall"] as? [String: Any])?["der_collar_0_25"] as? [String: Any])?["error_rate"] as? Double)
        let registry = try TestPlugins.freshRegistry("speakersync-speakerkit", configuration: ProviderConfiguration(sections: [:]),
                                                     logger: Logger(label: "figures") { _ in SwiftLogNoOpLogHandler() })
        let measured = try #require(registry.provider(id: "speakerkit")?.measured)
        #expect(measured.contains(String(format: "ami-dev %.1f %%", der * 100)), "\(measured)")
        #expect(measured.contains("scripts/publish-figures"))
    }
}
