import Foundation
import PluginHost
import Testing
import TestSupport

@Suite("PluginRegistry: loading real plugin libraries with dlopen")
struct PluginRegistryTests {
    @Test func listsBuiltinsAndTheEnergyPlugin() throws {
        let dir = try TestSupport.folderWithEnergyPlugin()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = CapturedLog()
        let registry = PluginRegistry(directory: dir.path, logger: log.logger())

        #expect(registry.failures.isEmpty, "\(registry.failures)")
        #expect(registry.providers.map(\.id) == ["none", "device", "energy"])
        #expect(registry.provider(id: "none")?.kind == .builtin)
        #expect(registry.provider(id: "device")?.kind == .builtin)
        let energy = try #require(registry.provider(id: "energy"))
        #expect(energy.kind == .plugin(path: dir.appendingPathComponent("libspeakersync-energy.so").path))
        #expect(energy.name == "Energy + pitch baseline")
        #expect(energy.description.contains("not a neural diarizer"))
        #expect(energy.latencyClass == .nearRealtime)
        #expect(!energy.licence.isEmpty && !energy.version.isEmpty)
    }

    @Test func withoutFolderOnlyBuiltinsAreListed() {
        let registry = PluginRegistry(directory: nil, logger: CapturedLog().logger())
        #expect(registry.providers == ProviderDescriptor.builtins)
        #expect(registry.failures.isEmpty)
    }

    @Test func unreadableFolderIsAFailureNotACrash() {
        let registry = PluginRegistry(directory: "/nonexistent/speakersync-plugins", logger: CapturedLog().logger())
        #expect(registry.providers == ProviderDescriptor.builtins)
        #expect(registry.failures.map(\.code) == [.directoryUnreadable])
    }

    @Test func rejectsNonPluginsIncompatibleABIAndDuplicatesButStillLoadsEnergy() throws {
        let dir = try TestSupport.folderWithEnergyPlugin()
        defer { try? FileManager.default.removeItem(at: dir) }
        let notPlugin = dir.appendingPathComponent("libnot-a-plugin.so")
        try TestSupport.compileSharedLibrary(source: "int answer(void) { return 42; }\n", to: notPlugin)
        let future = dir.appendingPathComponent("libfuture-abi.so")
        try TestSupport.compileSharedLibrary(
            source: """
                #include "speakersync_plugin.h"
                static const speakersync_plugin_entry_t entry = { sizeof(speakersync_plugin_entry_t), 999u };
                const speakersync_plugin_entry_t *speakersync_plugin_entry(void) { return &entry; }
                """, to: future)
        // A second copy of the energy plugin: its provider id is taken by the first copy (file-name order).
        let duplicate = dir.appendingPathComponent("libspeakersync-energy2.so")
        try FileManager.default.copyItem(atPath: try TestSupport.energyPluginPath(), toPath: duplicate.path)
        // Not a library name: ignored, not a failure.
        try "hello".write(to: dir.appendingPathComponent("README.txt"), atomically: true, encoding: .utf8)

        let log = CapturedLog()
        let registry = PluginRegistry(directory: dir.path, logger: log.logger())

        #expect(registry.providers.map(\.id) == ["none", "device", "energy"])
        #expect(registry.provider(id: "energy")?.kind == .plugin(path: dir.appendingPathComponent("libspeakersync-energy.so").path))
        let byPath = Dictionary(grouping: registry.failures, by: \.path)
        #expect(byPath.count == 3, "\(registry.failures)")
        #expect(byPath[notPlugin.path]?.map(\.code) == [.missingEntry])
        #expect(byPath[future.path]?.map(\.code) == [.incompatibleABI])
        #expect(byPath[duplicate.path]?.map(\.code) == [.duplicateProvider])
        #expect(byPath[duplicate.path]?.first?.providerID == "energy")

        // The operator sees one error line naming the file, the version found and the version expected.
        let abiLines = log.lines.filter { $0.level == .error && $0.metadata["plugin"] == future.path }
        #expect(abiLines.count == 1)
        #expect(abiLines.first.map { $0.message.contains(future.path) && $0.message.contains("999") && $0.message.contains("expects 1") } == true)

        // The energy plugin from the same folder still works.
        let instance = try registry.makeInstance(providerID: "energy", sessionID: "s", optionsJSON: "{}")
        try instance.push(samples: [Float](repeating: 0, count: 1600))
        #expect(try instance.pullTurns().isEmpty)  // silence has no speakers
    }

    @Test func unknownAndBuiltinProvidersHaveNoInstance() throws {
        let dir = try TestSupport.folderWithEnergyPlugin()
        defer { try? FileManager.default.removeItem(at: dir) }
        let registry = PluginRegistry(directory: dir.path, logger: CapturedLog().logger())
        #expect(throws: PluginError.self) {
            _ = try registry.makeInstance(providerID: "pyannote", sessionID: "s", optionsJSON: "")
        }
        do {
            _ = try registry.makeInstance(providerID: "pyannote", sessionID: "s", optionsJSON: "")
        } catch {
            #expect(error.code == .unknownProvider)
            #expect(error.message.contains("pyannote"))
        }
        for builtin in ["none", "device"] {
            do {
                _ = try registry.makeInstance(providerID: builtin, sessionID: "s", optionsJSON: "")
                Issue.record("\(builtin) should have no instance")
            } catch {
                #expect(error.code == .builtinProvider)
            }
        }
    }

    @Test(arguments: [
        (#"{"threshold": "high"}"#, "threshold"),
        (#"{"max_speakers": 0}"#, "max_speakers"),
        (#"{"max_speakers": 2.5}"#, "max_speakers"),
        (#"{"colour": 1}"#, "unknown option 'colour'"),
        (#"{"threshold": 1"#, "expected"),
        ("[1, 2]", "expected a JSON object"),
    ])
    func badOptionsReportThePluginsMessage(options: String, expectedFragment: String) throws {
        let dir = try TestSupport.folderWithEnergyPlugin()
        defer { try? FileManager.default.removeItem(at: dir) }
        let registry = PluginRegistry(directory: dir.path, logger: CapturedLog().logger())
        do {
            _ = try registry.makeInstance(providerID: "energy", sessionID: "s", optionsJSON: options)
            Issue.record("options \(options) were accepted")
        } catch {
            #expect(error.code == .invalidOptions)
            #expect(error.message.contains(expectedFragment), "\(error.message)")
        }
    }

    /// A plugin built before revision 3 has no check_options: its factory table ends before it, and the
    /// host must not read past struct_size. Its create() still refuses the options, as create_failed.
    @Test func aPluginWithoutCheckOptionsIsAskedOnlyByCreate() throws {
        let dir = try TestSupport.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try TestSupport.compileSharedLibrary(
            source: """
                #include <stdio.h>
                #include "speakersync_plugin.h"
                static const speakersync_provider_descriptor_t descriptor = {
                    sizeof(speakersync_provider_descriptor_t), "revision2", "Revision 2", "1.0.0", "refuses every session", 0, "MIT" };
                static const speakersync_provider_descriptor_t *describe(const speakersync_factory_t *f) { (void)f; return &descriptor; }
                static speakersync_instance_t *create(const speakersync_factory_t *f, const speakersync_instance_config_t *cfg,
                                                      char *error, size_t size) {
                    (void)f;
                    snprintf(error, size, "create refused options %s", cfg->options_json);
                    return NULL;
                }
                /* The table as revision 2 knew it: struct_size stops before check_options, which a
                   revision-2 plugin's memory would not even hold. */
                static const speakersync_factory_t factory = {
                    offsetof(speakersync_factory_t, check_options), NULL, describe, create, NULL, NULL };
                static speakersync_status_t init(const speakersync_host_t *host) { (void)host; return SPEAKERSYNC_OK; }
                static void deinit(void) {}
                static uint32_t count(void) { return 1; }
                static const speakersync_factory_t *get(uint32_t i) { return i == 0 ? &factory : NULL; }
                static const speakersync_plugin_entry_t entry = {
                    sizeof(speakersync_plugin_entry_t), SPEAKERSYNC_PLUGIN_ABI_VERSION, init, deinit, count, get };
                const speakersync_plugin_entry_t *speakersync_plugin_entry(void) { return &entry; }
                """, to: dir.appendingPathComponent("librevision2.so"))
        let registry = PluginRegistry(directory: dir.path, logger: CapturedLog().logger())
        #expect(registry.providers.map(\.id) == ["none", "device", "revision2"], "\(registry.failures)")
        do {
            _ = try registry.makeInstance(providerID: "revision2", sessionID: "s", optionsJSON: #"{"colour":1}"#)
            Issue.record("the session was created")
        } catch {
            #expect(error.code == .createFailed)
            #expect(error.message == #"create refused options {"colour":1}"#)
        }
    }

    @Test func pluginRejectsASampleRateItCannotHandle() throws {
        let dir = try TestSupport.folderWithEnergyPlugin()
        defer { try? FileManager.default.removeItem(at: dir) }
        let registry = PluginRegistry(directory: dir.path, logger: CapturedLog().logger())
        do {
            _ = try registry.makeInstance(providerID: "energy", sessionID: "s", sampleRate: 44100, optionsJSON: "")
            Issue.record("44.1 kHz was accepted")
        } catch {
            #expect(error.code == .createFailed)
            #expect(error.message.contains("44100"))
        }
    }

    @Test func instanceErrorsCarryThePluginsLastError() throws {
        let dir = try TestSupport.folderWithEnergyPlugin()
        defer { try? FileManager.default.removeItem(at: dir) }
        let registry = PluginRegistry(directory: dir.path, logger: CapturedLog().logger())
        let instance = try registry.makeInstance(providerID: "energy", sessionID: "s", optionsJSON: "")
        do {
            try instance.push(samples: [0.1, .nan, 0.2])
            Issue.record("NaN was accepted")
        } catch {
            #expect(error.code == .pushFailed)
            #expect(error.message.contains("not finite"))
            #expect(error.status == -1)
        }
        // After a failure the instance refuses further use instead of calling the plugin again.
        #expect(throws: PluginError(.invalidState, "the instance failed earlier")) { try instance.pullTurns() }

        let second = try registry.makeInstance(providerID: "energy", sessionID: "s2", optionsJSON: "")
        _ = try second.finalize()
        #expect(throws: PluginError(.invalidState, "push after finalize")) { try second.push(samples: [0]) }
    }

    /// A released library stays mapped (RTLD_NODELETE): Swift plugins leave metadata the runtime points at
    /// for good. Loading the file again reuses it and runs init() again, and its instances work.
    @Test func aReleasedLibraryStaysMappedAndLoadsAgain() throws {
        let dir = try TestSupport.folderWithEnergyPlugin()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("libspeakersync-energy.so").path
        do {
            let registry = PluginRegistry(directory: dir.path, logger: CapturedLog().logger())
            let instance = try registry.makeInstance(providerID: "energy", sessionID: "s", optionsJSON: "")
            try instance.push(samples: [Float](repeating: 0, count: 1600))
            _ = try instance.finalize()
        }
        // Registry and instance are gone, so the host has called deinit() and dlclose. RTLD_NOLOAD only
        // finds a library that is still resident.
        let resident = dlopen(path, RTLD_NOW | RTLD_NOLOAD)
        #expect(resident != nil, "the plugin was unmapped after its registry was released")
        if let resident { dlclose(resident) }

        let log = CapturedLog()
        let again = PluginRegistry(directory: dir.path, logger: log.logger())
        #expect(again.failures.isEmpty, "\(again.failures)")
        #expect(again.provider(id: "energy") != nil)
        let instance = try again.makeInstance(providerID: "energy", sessionID: "s2", optionsJSON: "")
        try instance.push(samples: [Float](repeating: 0, count: 1600))
        _ = try instance.finalize()
    }
}
