import ArgumentParser
import Foundation

struct ProvidersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "providers", abstract: "List the diarization providers a server offers, and plugins that failed to load.")

    @OptionGroup var connection: ServerConnection

    func run() throws {
        let root = try connection.json("/v1/providers")
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
