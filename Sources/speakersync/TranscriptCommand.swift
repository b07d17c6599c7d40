import ArgumentParser
import Foundation
import SpeakerSyncClient

struct TranscriptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "transcript", abstract: "Print a stored conversation's labelled transcript.")

    @Argument(help: "Conversation id.")
    var id: String

    @Option(help: "json, text, srt, vtt or rttm.")
    var format: String = "text"

    @Option(help: "HTTP base URL of the server (https:// for a TLS server).")
    var url: String = "http://127.0.0.1:8080"

    @OptionGroup var credential: ClientCredentialOptions

    @OptionGroup var tls: CAFileOption

    func run() throws {
        let escaped = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id
        let response = try SimpleHTTPClient.get("\(url)/v1/conversations/\(escaped)/transcript?format=\(format)", token: credential.token,
                                                caFilePath: tls.caFile)
        guard response.status == 200 else {
            throw CommandFailure("HTTP \(response.status): \(response.text)")
        }
        print(response.text, terminator: response.text.hasSuffix("\n") ? "" : "\n")
    }
}

struct ProvidersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "providers", abstract: "List the diarization providers a server offers, and plugins that failed to load.")

    @Option(help: "HTTP base URL of the server (https:// for a TLS server).")
    var url: String = "http://127.0.0.1:8080"

    @OptionGroup var credential: ClientCredentialOptions

    @OptionGroup var tls: CAFileOption

    func run() throws {
        let response = try SimpleHTTPClient.get("\(url)/v1/providers", token: credential.token, caFilePath: tls.caFile)
        guard response.status == 200, let root = response.json() as? [String: Any] else {
            throw CommandFailure("HTTP \(response.status): \(response.text)")
        }
        // The toggle a developer flips: every provider, whether it can serve now and why not, and what
        // it is (licence, needs, measured figures), as its descriptor says.
        for provider in root["providers"] as? [[String: Any]] ?? [] {
            let id = provider["id"] as? String ?? "?"
            let name = provider["name"] as? String ?? ""
            let latency = provider["latency_class"] as? String ?? ""
            let available = provider["available"] as? Bool ?? true
            print("\(id) — \(name) [\(latency)]\(available ? "" : " UNAVAILABLE")")
            if !available, let reason = provider["unavailable_reason"] as? String { print("    why: \(reason)") }
            for (label, key) in [("licence", "licence"), ("needs", "requirements"), ("measured", "measured")] {
                if let text = provider[key] as? String, !text.isEmpty { print("    \(label): \(text)") }
            }
        }
        for failure in root["failed"] as? [[String: Any]] ?? [] {
            print("failed: \(failure["path"] as? String ?? "?"): \(failure["reason"] as? String ?? "")")
        }
    }
}
