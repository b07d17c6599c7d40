import Foundation
import Glibc
import PluginHost
import Testing
import TestSupport
@testable import ProviderIsolation

/// The server checks the worker's protocol version as the worker checks the server's: a worker of
/// another build (here a stand-in that answers with protocol 99 on descriptor 3, as a replaced
/// executable would) is stopped and its plugin file listed as failed with both versions named.
@Suite struct WorkerProtocolVersionTests {
    @Test func aWorkerOfAnotherBuildIsRefused() throws {
        let folder = try TestPlugins.folder(copying: ["speakersync-energy"], faulty: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let worker = folder.appendingPathComponent("other-build-worker")
        // A manifest frame: length, kind 64 (ready), protocol 99, no providers, no failures.
        try """
            #!/usr/bin/env python3
            import os, struct, time
            payload = bytes([64]) + struct.pack("<III", 99, 0, 0)
            os.write(3, struct.pack("<I", len(payload)) + payload)
            time.sleep(30)
            """.write(to: worker, atomically: true, encoding: .utf8)
        #expect(chmod(worker.path, 0o755) == 0)
        var config = Hosts.config()
        config.workerExecutable = worker.path
        let host = try IsolatedProviderHost(directory: folder.path, config: config, logger: Hosts.logger)
        defer { host.shutdown() }
        #expect(!host.providers.contains { $0.id == "energy" })
        let failure = try #require(host.failures.first)
        #expect(failure.code == .workerFailed)
        #expect(failure.message.contains("speaks worker protocol 99, the server \(WorkerProtocol.version): not the same build"), "\(failure.message)")
    }

    /// Every record's smallest size is the sum of its fields', as the readers check counts with it.
    @Test func recordSizesComeFromTheirFields() {
        #expect(WireRecords.turn.minimumBytes == 33)
        #expect(WireRecords.provider.minimumBytes == 38)
        #expect(WireRecords.loadFailure.minimumBytes == 13)
    }
}
