import Foundation
import MeetingSynth
import SpeakerSyncClient
import SpeakerSyncServer
import TestSupport
import Testing
@testable import SpeakerSyncEval

/// `speakersync eval` with a device token (which may act only as its own device): it streams as the
/// device named by `--device-id`, or by default as the token's device (GET /v1/whoami); another
/// device is refused at once with the reason.
@Suite(.serialized) struct EvalDeviceTests {
    static let adminKey = "eval-device-admin-key-0123456789abcdef0123"

    final class Server {
        let app: SpeakerSyncApplication
        let port: Int
        init() throws {
            var config = ServerConfig.default
            config.session.idleIntervalSeconds = 600
            config.port = 0
            config.databaseURL = try TestCluster.freshDatabase()
            config.access.environmentAdminKey = EvalDeviceTests.adminKey
            config.access.requestsPerSecond = 0
            app = SpeakerSyncApplication(config: config, logger: EvalRunnerTests.logger)
            port = try app.start()
        }
        deinit { app.shutdown() }
        var ws: String { "ws://127.0.0.1:\(port)" }

        /// The device ids of the stored conversations, as the admin sees them.
        func conversationDevices() throws -> [String] {
            let response = try SimpleHTTPClient.get("http://127.0.0.1:\(port)/v1/conversations?limit=50", token: EvalDeviceTests.adminKey)
            let conversations = (response.json() as? [String: Any])?["conversations"] as? [[String: Any]] ?? []
            return conversations.compactMap { $0["device_id"] as? String }
        }
    }

    @Test func theDeviceIsTheGivenOneElseTheTokensElseTheDefault() throws {
        let server = try Server()
        let token = try server.app.createDeviceToken(deviceID: "phone-eval")
        #expect(try EvalDevice.resolve(given: nil, serverURL: server.ws, token: token, caFilePath: nil) == "phone-eval")
        #expect(try EvalDevice.resolve(given: "phone-other", serverURL: server.ws, token: token, caFilePath: nil) == "phone-other")
        #expect(try EvalDevice.resolve(given: nil, serverURL: server.ws, token: Self.adminKey, caFilePath: nil) == EvalDevice.defaultID)
        #expect(try EvalDevice.resolve(given: nil, serverURL: server.ws, token: nil, caFilePath: nil) == EvalDevice.defaultID)
        #expect {
            try EvalDevice.resolve(given: nil, serverURL: server.ws, token: "sst_unknown", caFilePath: nil)
        } throws: { "\($0)".contains("HTTP 401") }
    }

    @Test func evalWithADeviceTokenStreamsAsTheTokensDeviceAndRefusesAnotherAtOnce() async throws {
        let server = try Server()
        let token = try server.app.createDeviceToken(deviceID: "phone-eval")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eval-device-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        try MeetingSet.write(MeetingSetConfig(speakerCount: 2, meetingCount: 1, turnCount: 4, seed: 61), to: directory)
        let arguments = ["eval", "--url", server.ws, "--provider", "device", "--speed", "0", "--quiet", "--json",
                         "--audio", directory.path, "--rttm", directory.appendingPathComponent("reference.rttm").path,
                         "--words", directory.appendingPathComponent("words").path]
        let environment = ["SPEAKERSYNC_TOKEN": token]

        // Inferred from /v1/whoami, then named explicitly: both stream as phone-eval and score the file.
        for extra in [[], ["--device-id", "phone-eval"]] {
            let result = try await CommandLineRun.run(arguments + extra, environment: environment, timeoutSeconds: 300)
            #expect(result.status == 0, "\(extra): \(result.standardError)")
            let report = (try? JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))) as? [String: Any]
            #expect((report?["files"] as? [Any])?.count == 1, "\(extra): \(result.standardOutput.prefix(300))")
        }
        let devices = try server.conversationDevices()
        #expect(!devices.isEmpty && devices.allSatisfy { $0 == "phone-eval" }, "\(devices)")

        // Another device: the server refuses the start (device_mismatch), and eval stops with it.
        let refused = try await CommandLineRun.run(arguments + ["--device-id", "phone-other"], environment: environment, timeoutSeconds: 300)
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("device_mismatch"), "\(refused.standardError)")
    }
}
