import Foundation
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// `token create` with no flags reaches a local `serve` started on a port and with a key file of its
/// choosing: serve records both (`<default data dir>.server.json`) and removes the record as it stops.
@Suite(.serialized) struct LocalServerRecordTests {
    @Test func tokenCreateFindsTheLocalServersPortAndKeyFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-record-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // The user's default data folder, and a key file somewhere else entirely.
        let environment = ["SPEAKERSYNC_DATA_DIR": folder.appendingPathComponent("default").path, "SPEAKERSYNC_ADMIN_KEY": ""]
        let keyFile = folder.appendingPathComponent("elsewhere/admin-key").path
        let record = folder.path + "/default.server.json"

        let server = try ServerProcess(databaseURL: try TestCluster.freshDatabase(), extraArguments: ["--admin-key-file", keyFile],
                                       environment: environment)
        // serve writes the record just after it starts listening, so /healthz (what ServerProcess waits
        // for) can answer first: on a loaded machine the check raced the write.
        #expect(Polling.until(seconds: 60) { FileManager.default.fileExists(atPath: record) })
        let created = try await CommandLineRun.run(["token", "create", "--device", "phone-local"], environment: environment, timeoutSeconds: 60)
        #expect(created.status == 0, "\(created.standardError)")
        #expect(created.standardOutput.hasPrefix("sst_"), "\(created.standardOutput)")
        let listed = try await CommandLineRun.run(["token", "list", "--device", "phone-local"], environment: environment, timeoutSeconds: 60)
        #expect(listed.status == 0 && listed.standardOutput.contains("phone-local"), "\(listed.standardOutput) \(listed.standardError)")

        #expect(server.terminate() == 0)
        #expect(!FileManager.default.fileExists(atPath: record))
        // With no server running, the default address again: refused with the reason, not a stale port.
        let after = try await CommandLineRun.run(["token", "list"], environment: environment, timeoutSeconds: 60)
        #expect(after.status != 0)
    }
}
