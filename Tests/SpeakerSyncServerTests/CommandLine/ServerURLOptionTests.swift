import Foundation
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// Every client command takes the server as http(s)://host:port or ws(s)://host:port, with or
/// without /v1/listen, and reaches the same server whichever form it is given.
@Suite(.serialized) struct ServerURLOptionTests {
    typealias TestServer = EndToEndTests.TestServer

    static func forms(_ port: Int) -> [String] {
        ["http://127.0.0.1:\(port)", "ws://127.0.0.1:\(port)", "ws://127.0.0.1:\(port)/v1/listen", "http://127.0.0.1:\(port)/v1/listen/",
         "127.0.0.1:\(port)"]
    }

    @Test func httpAndWebSocketCommandsTakeEveryForm() async throws {
        let server = try TestServer()
        let files = try ClientContractEndToEndTests.recording()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        let environment = ["SPEAKERSYNC_TOKEN": server.adminKey]
        for url in Self.forms(server.port) {
            let providers = try await CommandLineRun.run(["providers", "--url", url], environment: environment, timeoutSeconds: 60)
            #expect(providers.status == 0 && providers.standardOutput.contains("energy"), "providers --url \(url): \(providers.standardError)")
            let streamed = try await CommandLineRun.run(["stream", files.wav, "--words", files.words, "--provider", "device", "--format", "json",
                                                         "--url", url], environment: environment, timeoutSeconds: 120)
            #expect(streamed.status == 0, "stream --url \(url): \(streamed.standardError)")
            let id = (try? JSONSerialization.jsonObject(with: Data(streamed.standardOutput.utf8)) as? [String: Any])?["conversation_id"] as? String
            let transcript = try await CommandLineRun.run(["transcript", id ?? "?", "--url", url], environment: environment, timeoutSeconds: 60)
            #expect(transcript.status == 0 && transcript.standardOutput.contains("hello"), "transcript --url \(url): \(transcript.standardError)")
        }
        let tokens = try await CommandLineRun.run(["token", "list", "--url", "ws://127.0.0.1:\(server.port)/v1/listen"],
                                                  environment: ["SPEAKERSYNC_ADMIN_KEY": server.adminKey], timeoutSeconds: 60)
        #expect(tokens.status == 0, "\(tokens.standardError)")
    }

    @Test(arguments: [["providers"], ["conversations", "list"], ["health"], ["eval", "--audio", "x.wav", "--rttm", "x.rttm"]])
    func whatIsNotAServerURLIsAUsageError(_ command: [String]) async throws {
        let result = try await CommandLineRun.run(command + ["--url", "ftp://127.0.0.1:1"], timeoutSeconds: 60)
        #expect(result.status == 64, "\(command): exit \(result.status)")
        #expect(result.standardError.contains("--url: 'ftp://127.0.0.1:1' is not a server URL (scheme ftp:// is neither http(s) nor ws(s))"),
                "\(command): \(result.standardError)")
    }
}
