import Foundation
import PluginHost
import Testing
import TestSupport

/// ABI 1 revision 4: the operator's provider configuration reaches the plugin through the host table,
/// a provider that cannot serve says why (and its sessions are refused), descriptors say what they need
/// and how they measured; plugins built before it keep loading.
@Suite struct RevisionFourTests {
    /// A plugin whose one provider is usable only when the operator configured `"model": "present"`; it
    /// reads the configuration in init(), as a plugin that opens model files would.
    static let configurablePlugin = """
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include "speakersync_plugin.h"
        static char reason[256];
        static const speakersync_provider_descriptor_t descriptor = {
            sizeof(speakersync_provider_descriptor_t), "configured", "Configured", "1.0.0", "needs a model", 0, "MIT",
            "a model: {\\"model\\": \\"present\\"} in its section of the provider config", "not measurable here: a test fixture" };
        static const speakersync_provider_descriptor_t *describe(const speakersync_factory_t *f) { (void)f; return &descriptor; }
        static speakersync_instance_t *create(const speakersync_factory_t *f, const speakersync_instance_config_t *cfg,
                                              char *error, size_t size) {
            (void)f; (void)cfg; snprintf(error, size, "no instances in this test"); return NULL;
        }
        static speakersync_status_t availability(const speakersync_factory_t *f, char *buf, size_t size) {
            (void)f;
            if (!reason[0]) return SPEAKERSYNC_OK;
            snprintf(buf, size, "%s", reason);
            return SPEAKERSYNC_ERR_UNAVAILABLE;
        }
        static const speakersync_factory_t factory = { sizeof(speakersync_factory_t), NULL, describe, create, NULL, NULL, availability };
        static speakersync_status_t init(const speakersync_host_t *host) {
            reason[0] = 0;
            if (!SPEAKERSYNC_HAS_MEMBER(host, speakersync_host_t, provider_config) || !host->provider_config) {
                snprintf(reason, sizeof reason, "the host offers no configuration");
                return SPEAKERSYNC_OK;
            }
            const char *config = host->provider_config(host, "configured");
            if (!config) snprintf(reason, sizeof reason, "no configuration for provider configured");
            else if (!strstr(config, "\\"model\\":\\"present\\"")) snprintf(reason, sizeof reason, "the model is not present");
            return SPEAKERSYNC_OK;
        }
        static void deinit(void) {}
        static uint32_t count(void) { return 1; }
        static const speakersync_factory_t *get(uint32_t i) { return i == 0 ? &factory : NULL; }
        static const speakersync_plugin_entry_t entry = {
            sizeof(speakersync_plugin_entry_t), SPEAKERSYNC_PLUGIN_ABI_VERSION, init, deinit, count, get };
        const speakersync_plugin_entry_t *speakersync_plugin_entry(void) { return &entry; }
        """

    /// Each registry loads its own copy of the file (a loaded library keeps the configuration its
    /// init saw).
    func registry(_ configuration: ProviderConfiguration) throws -> (PluginRegistry, URL) {
        let dir = try TestSupport.makeTemporaryDirectory()
        try TestSupport.compileSharedLibrary(source: Self.configurablePlugin, to: dir.appendingPathComponent("libconfigured.so"))
        return (PluginRegistry(directory: dir.path, configuration: configuration, logger: CapturedLog().logger()), dir)
    }

    @Test func theOperatorsConfigurationReachesThePlugin() throws {
        let configuration = try ProviderConfiguration.parse(Data(#"{"configured": {"model": "present", "key": "secret"}, "other": {}}"#.utf8), source: "test")
        let (registry, dir) = try registry(configuration)
        defer { try? FileManager.default.removeItem(at: dir) }
        let provider = try #require(registry.provider(id: "configured"))
        #expect(provider.unavailableReason == nil)
        #expect(registry.status(of: "configured") == .available)
        #expect(provider.requirements == #"a model: {"model": "present"} in its section of the provider config"#)
        #expect(provider.measured == "not measurable here: a test fixture")
    }

    @Test func aProviderThatCannotServeIsListedWithWhyAndRefused() throws {
        let (registry, dir) = try registry(.empty)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(registry.providers.map(\.id) == ["none", "device", "configured"])
        #expect(registry.provider(id: "configured")?.unavailableReason == "no configuration for provider configured")
        #expect(registry.status(of: "configured") == .unavailable(reason: "no configuration for provider configured", retryAfterSeconds: nil))
        do {
            _ = try registry.makeInstance(providerID: "configured", sessionID: "s", optionsJSON: "{}")
            Issue.record("an unavailable provider made an instance")
        } catch {
            #expect(error.code == .providerUnavailable)
            #expect(error.message == "no configuration for provider configured")
        }
    }

    @Test func configFilesAreCheckedWithoutQuotingTheirValues() throws {
        #expect(throws: ProviderConfigurationError.self) { try ProviderConfiguration.parse(Data("[1]".utf8), source: "f.json") }
        do {
            _ = try ProviderConfiguration.parse(Data(#"{"falcon": "the-secret-key"}"#.utf8), source: "f.json")
            Issue.record("a provider section that is not an object was accepted")
        } catch {
            #expect(error.message == "f.json: the value for provider 'falcon' must be a JSON object")
            #expect(!error.message.contains("the-secret-key"))
        }
        let parsed = try ProviderConfiguration.parse(Data(#"{"b": {"z": 1, "a": "/m.onnx"}}"#.utf8), source: "f.json")
        #expect(parsed.sections == ["b": #"{"a":"/m.onnx","z":1}"#])
    }

    /// PICOVOICE_ACCESS_KEY moves into the falcon section (so it reaches Falcon's worker through its
    /// configuration, never an environment); a key in the file wins, and other sections are untouched.
    @Test func anEnvironmentSecretMovesIntoItsProvidersSection() throws {
        let none = ProviderConfiguration(sections: ["sherpa-onnx": "{}"])
        let filled = none.fillingSecrets(from: ["PICOVOICE_ACCESS_KEY": " pv-key \n", "OTHER": "x"])
        #expect(filled.sections == ["sherpa-onnx": "{}", "falcon": #"{"access_key":"pv-key"}"#])
        let withDevice = ProviderConfiguration(sections: ["falcon": #"{"device":"cpu:2"}"#])
        #expect(withDevice.fillingSecrets(from: ["PICOVOICE_ACCESS_KEY": "pv"]).sections == ["falcon": #"{"access_key":"pv","device":"cpu:2"}"#])
        let fileKey = ProviderConfiguration(sections: ["falcon": #"{"access_key":"from-file"}"#])
        #expect(fileKey.fillingSecrets(from: ["PICOVOICE_ACCESS_KEY": "pv"]) == fileKey)
        #expect(none.fillingSecrets(from: ["PICOVOICE_ACCESS_KEY": "  "]) == none)
    }

    @Test func theBundledPluginsDescribeThemselves() throws {
        let dir = try TestSupport.folderWithEnergyPlugin()
        defer { try? FileManager.default.removeItem(at: dir) }
        let registry = PluginRegistry(directory: dir.path, logger: CapturedLog().logger())
        let energy = try #require(registry.provider(id: "energy"))
        #expect(energy.measured.contains("speakersync eval"))
        #expect(energy.unavailableReason == nil)
    }
}
