import Foundation
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// `speakersync conversations list|show|delete`, run as a user would against a real server.
@Suite(.serialized) struct ConversationsCommandTests {
    typealias TestServer = EndToEndTests.TestServer

    /// A stored two-speaker conversation of `device` (device turns, so the labels are known): its id.
    static func storeConversation(on server: TestServer, device: String) async throws -> String {
        let words = [DeviceWord(text: "hello", startSeconds: 0.2, endSeconds: 0.5), DeviceWord(text: "there", startSeconds: 0.6, endSeconds: 0.9),
                     DeviceWord(text: "goodbye", startSeconds: 1.3, endSeconds: 1.7)]
        let segments = [DeviceSegment(speaker: "A", startSeconds: 0, endSeconds: 1.0), DeviceSegment(speaker: "B", startSeconds: 1.2, endSeconds: 2.0)]
        let report = try await server.stream(DeviceStreamConfig(url: server.ws, provider: "device", deviceID: device),
                                             audio: [Float](repeating: 0, count: 32_000), sampleRate: 16_000, words: words, segments: segments)
        #expect(report.closeCode == 1000)
        return report.conversationID
    }

    static func run(_ arguments: [String], on server: TestServer) async throws -> CommandLineRun.Result {
        try await CommandLineRun.run(arguments + ["--url", server.http], environment: ["SPEAKERSYNC_TOKEN": server.adminKey], timeoutSeconds: 60)
    }

    @Test func listShowsATableAndJSONAndFollowsThePages() async throws {
        let server = try TestServer()
        let first = try await Self.storeConversation(on: server, device: "phone-list")
        let second = try await Self.storeConversation(on: server, device: "phone-list")
        _ = try await Self.storeConversation(on: server, device: "phone-other")

        let table = try await Self.run(["conversations", "list", "--device-id", "phone-list"], on: server)
        #expect(table.status == 0, "\(table.standardError)")
        let lines = table.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first?.split(separator: " ", omittingEmptySubsequences: true) == ["id", "device", "started", "status", "words", "speakers"])
        #expect(lines.count == 3, "\(table.standardOutput)")
        for id in [first, second] {
            let row = try #require(lines.first { $0.hasPrefix(id) }, "\(id) missing from \(table.standardOutput)")
            let cells = row.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            #expect(cells.count == 6 && cells[1] == "phone-list" && cells[3] == "finalized" && cells[4] == "3" && cells[5] == "2", "\(row)")
        }

        // One conversation per page: the first page notes the cursor; --all follows it to the end.
        let page = try await Self.run(["conversations", "list", "--device-id", "phone-list", "--limit", "1"], on: server)
        #expect(page.standardOutput.split(separator: "\n").count == 2)
        #expect(page.standardError.contains("more conversations: --cursor "), "\(page.standardError)")
        let all = try await Self.run(["conversations", "--device-id", "phone-list", "--limit", "1", "--all", "--json"], on: server)
        #expect(all.status == 0, "\(all.standardError)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(all.standardOutput.utf8)) as? [String: Any])
        let ids = (root["conversations"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(Set(ids) == [first, second] && ids.count == 2, "\(ids)")
        #expect(root["next_cursor"] is NSNull)
    }

    @Test func showPrintsTheLabelledTranscriptAndDeleteRemovesIt() async throws {
        let server = try TestServer()
        let id = try await Self.storeConversation(on: server, device: "phone-show")

        let shown = try await Self.run(["conversations", "show", id], on: server)
        #expect(shown.status == 0, "\(shown.standardError)")
        #expect(shown.standardOutput.hasPrefix("conversation \(id)\ndevice phone-show, provider device, finalized"), "\(shown.standardOutput)")
        let transcript = shown.standardOutput.split(separator: "\n").filter { $0.hasPrefix("Speaker ") }
        #expect(transcript.count == 2 && transcript[0].hasSuffix(": hello there") && transcript[1].hasSuffix(": goodbye"), "\(shown.standardOutput)")

        let json = try await Self.run(["conversations", "show", id, "--json"], on: server)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect(object["id"] as? String == id && object["device_id"] as? String == "phone-show")
        #expect((object["utterances"] as? [[String: Any]])?.map { $0["text"] as? String } == ["hello there", "goodbye"])

        let deleted = try await Self.run(["conversations", "delete", id], on: server)
        #expect(deleted.status == 0, "\(deleted.standardError)")
        #expect(deleted.standardOutput == "deleted conversation \(id)\n")
        #expect(try server.json("/v1/conversations/\(id)").status == 404)
    }

    /// The server's refusals reach the user in its own words, with a non-zero exit.
    @Test func serverErrorsPrintTheServersMessageAndExitNonZero() async throws {
        let server = try TestServer()
        for arguments in [["conversations", "show", "no-such-conversation"], ["conversations", "delete", "no-such-conversation"]] {
            let result = try await Self.run(arguments, on: server)
            #expect(result.status != 0)
            #expect(result.standardError.contains("HTTP 404 (conversation_not_found): no conversation with id 'no-such-conversation'"),
                    "\(arguments): \(result.standardError)")
        }
        let badLimit = try await Self.run(["conversations", "list", "--limit", "500"], on: server)
        #expect(badLimit.status != 0)
        #expect(badLimit.standardError.contains("HTTP 400 (invalid_parameter): limit must be a whole number from 1 to 200"), "\(badLimit.standardError)")
        let unauthorised = try await CommandLineRun.run(["conversations", "list", "--url", server.http], environment: ["SPEAKERSYNC_TOKEN": "sst_unknown"],
                                                        timeoutSeconds: 60)
        #expect(unauthorised.status != 0)
        #expect(unauthorised.standardError.contains("HTTP 401"), "\(unauthorised.standardError)")
    }
}
