import Foundation
import Testing
@testable import ProviderIsolation

/// The files a worker may reach (docs/security.md, "The provider sandbox"), as the server computes them.
@Suite struct LandlockRulesTests {
    static let maps = """
        55d0c0000000-55d0c0001000 r--p 00000000 08:01 1 /srv/speakersync/bin/speakersync
        55d0c0001000-55d0c0100000 r-xp 00001000 08:01 1 /srv/speakersync/bin/speakersync
        7f0000000000-7f0000100000 r-xp 00000000 08:01 2 /opt/swift/usr/lib/swift/linux/libswiftCore.so
        7f0000200000-7f0000300000 r--p 00000000 08:01 3 /var/lib/speakersync/audio/123.raw
        7f0000300000-7f0000400000 rw-s 00000000 00:01 4 /dev/zero (deleted)
        7f0000400000-7f0000500000 r-xp 00000000 00:01 5 /memfd:jit (deleted)
        7f0000500000-7f0000600000 r-xp 00000000 08:01 6 /tmp/someone/lib.so
        7f0000600000-7f0000700000 rw-p 00000000 00:00 0 [heap]
        7f0000700000-7f0000800000 r-xp 00000000 08:01 7 /srv/speakersync/vendor/sherpa-onnx/lib/libonnxruntime.so (deleted)
        """

    @Test func onlyTheFoldersOfMappedProgramsAndLibrariesCount() {
        #expect(LandlockRules.folders(ofMappedFiles: Self.maps) == [
            "/srv/speakersync/bin", "/opt/swift/usr/lib/swift/linux", "/srv/speakersync/vendor/sherpa-onnx/lib",
        ])
    }

    @Test func modelLocationsComeFromConfigurationsAndModelVariables() {
        #expect(LandlockRules.absolutePaths(inJSON: #"{"embedding_models":{"a":"/m/a.onnx","b":{"path":"/m2/b.onnx"}},"threads":2,"x":"rel/p"}"#)
                == ["/m/a.onnx", "/m2/b.onnx"])
        #expect(LandlockRules.absolutePaths(inJSON: "not json").isEmpty)
        #expect(LandlockRules.namesModelLocation("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL"))
        #expect(LandlockRules.namesModelLocation("SPEAKERSYNC_MODELS"))
        #expect(LandlockRules.namesModelLocation("SPEAKERSYNC_SHERPA_LIB"))
        #expect(!LandlockRules.namesModelLocation("SPEAKERSYNC_DATA_DIR"))
        #expect(!LandlockRules.namesModelLocation("SPEAKERSYNC_PROVIDER_CONFIG"))
        #expect(!LandlockRules.namesModelLocation("HOME_MODEL"))
    }

    @Test func aWorkerReadsItsProgramPluginAndModelsAndWritesOnlyItsTemporaryFolder() {
        let rules = LandlockRules(
            pluginPath: "/srv/plugins/libspeakersync-energy.so", workerExecutable: "/srv/speakersync/bin/speakersync",
            mappedFiles: Self.maps, configSections: [#"{"segmentation_model":"/models/seg.onnx"}"#],
            environment: ["SPEAKERSYNC_MODELS": "/models2", "SPEAKERSYNC_DATA_DIR": "/var/lib/speakersync", "HOME": "/root"],
            vendorFolders: ["/srv/speakersync/vendor"], temporaryFolder: "/tmp/speakersync-worker.abc").rules
        let read = rules.filter { $0.access == .read }.map(\.path)
        let written = rules.filter { $0.access == .readWrite }.map(\.path)
        #expect(written == ["/dev/null", "/tmp/speakersync-worker.abc"])
        for expected in ["/usr", "/etc", "/proc", "/srv/plugins", "/srv/speakersync/bin", "/opt/swift/usr/lib/swift/linux", "/models",
                         "/srv/speakersync/vendor"] {
            #expect(read.contains(expected), "\(expected)")
        }
        // A missing path counts as a file: its folder. "/models2" does not exist here, so "/".
        // "/" is never allowed, nor the data folder, home, /tmp or /dev as a whole.
        for forbidden in ["/", "/var/lib/speakersync", "/var/lib/speakersync/audio", "/root", "/tmp", "/dev", "/tmp/someone"] {
            #expect(!read.contains(forbidden), "\(forbidden)")
        }
        #expect(Set(read).count == read.count)
    }
}
