import ArgumentParser
import Foundation
import SpeakerSyncClient

/// `speakersync compare ID --providers A,B [--reference-rttm R.rttm]`: the server's comparison of a
/// conversation's stored labellings (GET …/compare), printed as two tables.
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Compare the providers that labelled one stored conversation (live, shadow, re-diarized): DER of each against the others and word agreement.")

    @Argument(help: "Conversation id.")
    var id: String

    @Option(help: "Comma-separated labellings to compare (provider ids); default: all the conversation has.")
    var providers: String?

    @Option(name: .customLong("reference"), help: "Score against this uploaded reference (PUT …/references/NAME).")
    var reference: String?

    @Option(name: .customLong("reference-rttm"), help: "Upload this RTTM as the reference (named by --reference, default \"cli\") and score against it.")
    var referenceRTTM: String?

    @Flag(help: "Print the server's JSON instead of the tables.")
    var json = false

    @OptionGroup var connection: ServerConnection

    func run() throws {
        let escaped = ServerConnection.escape(id)
        var referenceName = reference
        if let path = referenceRTTM {
            let name = reference ?? "cli"
            let text = try String(contentsOfFile: path, encoding: .utf8)
            do {
                _ = try connection.request("PUT", "/v1/conversations/\(escaped)/references/\(ServerConnection.escape(name))",
                                           body: Array(text.utf8), contentType: "text/plain")
            } catch let failure as CommandFailure {
                throw CommandFailure("uploading the reference: \(failure)")
            }
            referenceName = name
        }
        var query: [String] = []
        if let providers { query.append("providers=\(providers.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? providers)") }
        if let referenceName { query.append("reference=\(ServerConnection.escape(referenceName))") }
        let response = try connection.get("/v1/conversations/\(escaped)/compare" + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
        guard let root = response.json() as? [String: Any] else {
            throw CommandFailure("the server's comparison is not a JSON object: \(response.text.prefix(200))")
        }
        if json {
            print(response.text)
            return
        }
        print(Self.render(root))
    }

    static func render(_ root: [String: Any]) -> String {
        func percent(_ value: Any?) -> String { (value as? Double).map { String(format: "%.1f%%", $0 * 100) } ?? "-" }
        func number(_ value: Any?, _ format: String) -> String { (value as? Double).map { String(format: format, $0) } ?? "-" }
        func latency(_ value: Any?) -> String {
            guard let object = value as? [String: Any], let p50 = object["p50"] as? Double, let p95 = object["p95"] as? Double else { return "-" }
            return String(format: "%.3f/%.3f", p50, p95)
        }
        var lines = ["conversation \(root["conversation_id"] as? String ?? "?"), \(number(root["audio_seconds"], "%.1f")) s of audio; DER with a \(number(root["collar_seconds"], "%.2f")) s collar and without, overlap scored"]
        var rows = [["labelling", "source", "complete", "speakers", "words", "unlabelled", "RTF", "label p50/p95 s"]]
        let described = ((root["reference"] as? [String: Any]).map { [$0] } ?? []) + (root["labellings"] as? [[String: Any]] ?? [])
        for labelling in described {
            rows.append([
                labelling["name"] as? String ?? "?", labelling["source"] as? String ?? "?", labelling["complete"] as? Bool == true ? "yes" : "no",
                "\(labelling["speakers"] as? Int ?? 0)", "\(labelling["words"] as? Int ?? 0)", "\(labelling["unlabelled_words"] as? Int ?? 0)",
                number(labelling["real_time_factor"], "%.4f"), latency(labelling["label_latency_seconds"]),
            ])
        }
        lines += table(rows)
        lines.append("")
        var pairs = [["reference → hypothesis", "DER.25", "DER", "missed s", "false alarm s", "confusion s", "words with the same speaker"]]
        for pair in root["pairs"] as? [[String: Any]] ?? [] {
            let components = pair["der_components"] as? [String: Any] ?? [:]
            pairs.append([
                "\(pair["reference"] as? String ?? "?") → \(pair["hypothesis"] as? String ?? "?")",
                percent(pair["der"]), percent(pair["der_no_collar"]), number(components["missed_seconds"], "%.2f"),
                number(components["false_alarm_seconds"], "%.2f"), number(components["confusion_seconds"], "%.2f"),
                "\(percent(pair["word_agreement"])) (\(pair["words_same_speaker"] as? Int ?? 0)/\(pair["words_compared"] as? Int ?? 0))",
            ])
        }
        lines += table(pairs)
        return lines.joined(separator: "\n")
    }

    /// Left-aligned columns two spaces apart.
    static func table(_ rows: [[String]]) -> [String] {
        let widths = (0..<(rows.first?.count ?? 0)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
    }
}
