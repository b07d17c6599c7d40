import ArgumentParser
import Foundation
import SpeakerSyncClient

struct TranscriptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "transcript", abstract: "Print a stored conversation's labelled transcript.")

    @Argument(help: "Conversation id.")
    var id: String

    @Option(help: "json, text, srt, vtt or rttm.")
    var format: String = "text"

    @Option(help: "HTTP base URL of the server.")
    var url: String = "http://127.0.0.1:8080"

    func run() throws {
        let escaped = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id
        let response = try SimpleHTTPClient.get("\(url)/v1/conversations/\(escaped)/transcript?format=\(format)")
        guard response.status == 200 else {
            throw CommandFailure("HTTP \(response.status): \(response.text)")
        }
        print(response.text, terminator: response.text.hasSuffix("\n") ? "" : "\n")
    }
}

struct ProvidersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "providers", abstract: "List the diarization providers a server offers, and plugins that failed to load.")

    @Option(help: "HTTP base URL of the server.")
    var url: String = "http://127.0.0.1:8080"

    func run() throws {
        let response = try SimpleHTTPClient.get("\(url)/v1/providers")
        guard response.status == 200, let root = response.json() as? [String: Any] else {
            throw CommandFailure("HTTP \(response.status): \(response.text)")
        }
        for provider in root["providers"] as? [[String: Any]] ?? [] {
            let id = provider["id"] as? String ?? "?"
            let name = provider["name"] as? String ?? ""
            let latency = provider["latency_class"] as? String ?? ""
            print("\(id.padding(toLength: 12, withPad: " ", startingAt: 0)) \(name) [\(latency)]")
        }
        for failure in root["failed"] as? [[String: Any]] ?? [] {
            print("failed: \(failure["path"] as? String ?? "?"): \(failure["reason"] as? String ?? "")")
        }
    }
}
