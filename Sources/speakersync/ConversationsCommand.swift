import ArgumentParser
import Foundation

/// `speakersync conversations list|show|delete`: the stored conversations, through the HTTP API
/// (`GET /v1/conversations`, `GET /v1/conversations/{id}` and its transcript, `DELETE …/{id}`), with
/// the credential and server URL every client command takes. A device token sees its device's only.
struct ConversationsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conversations", abstract: "List, show and delete stored conversations.",
        subcommands: [List.self, Show.self, Delete.self], defaultSubcommand: List.self)

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List conversations, newest first: id, device, started, status, words, speakers.")

        @Option(name: .customLong("device-id"), help: "Only this device's conversations (a device token sees only its own anyway).")
        var deviceID: String?

        @Option(help: "Conversations per page (the server takes 1 to 200; default 50).")
        var limit: Int?

        @Option(help: "Start at this page (the next_cursor a previous page gave).")
        var cursor: String?

        @Flag(help: "Follow the pages to the last conversation (otherwise one page, and a note on standard error when there are more).")
        var all = false

        @Flag(help: "Print the server's JSON ({\"conversations\":[…],\"next_cursor\"}) instead of the table.")
        var json = false

        @OptionGroup var connection: ServerConnection

        func run() throws {
            var conversations: [[String: Any]] = []
            var next = cursor
            repeat {
                let page = try connection.json(route(cursor: next))
                conversations += page["conversations"] as? [[String: Any]] ?? []
                next = page["next_cursor"] as? String
            } while all && next != nil
            if json {
                print(try JSONText.render(["conversations": conversations, "next_cursor": next as Any? ?? NSNull()]))
            } else {
                print(Self.table(conversations))
            }
            if let next, !json {
                FileHandle.standardError.write(Data("more conversations: --cursor \(next) for the next page, or --all\n".utf8))
            }
        }

        func route(cursor: String?) -> String {
            let query = [
                deviceID.map { "device_id=\(ServerConnection.escape($0))" },
                limit.map { "limit=\($0)" },
                cursor.map { "cursor=\(ServerConnection.escape($0))" },
            ].compactMap { $0 }
            return "/v1/conversations" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        }

        /// One row per conversation under a header; "no conversations" rather than a bare header.
        static func table(_ conversations: [[String: Any]]) -> String {
            guard !conversations.isEmpty else { return "no conversations" }
            var rows = [["id", "device", "started", "status", "words", "speakers"]]
            for conversation in conversations {
                rows.append([
                    conversation["id"] as? String ?? "?", conversation["device_id"] as? String ?? "?",
                    conversation["started_at"] as? String ?? "-", conversation["status"] as? String ?? "?",
                    "\(conversation["word_count"] as? Int ?? 0)", "\(ConversationsCommand.speakerNames(conversation).count)",
                ])
            }
            return CompareCommand.table(rows).joined(separator: "\n")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a conversation: what it is (device, status, speakers), then its labelled transcript.")

        @Argument(help: "Conversation id.")
        var id: String

        @Flag(help: "Print the conversation's JSON (GET /v1/conversations/{id}) with its transcript's utterances added.")
        var json = false

        @OptionGroup var connection: ServerConnection

        func run() throws {
            let conversation = try connection.json("/v1/conversations/\(ServerConnection.escape(id))")
            if json {
                let transcript = try TranscriptCommand.fetch(id, format: "json", from: connection)
                let utterances = (try? JSONSerialization.jsonObject(with: Data(transcript.utf8)) as? [String: Any])?["utterances"]
                var object = conversation
                object["utterances"] = utterances ?? [Any]()
                print(try JSONText.render(object))
                return
            }
            print(Self.header(conversation))
            print("")
            let text = try TranscriptCommand.fetch(id, format: "text", from: connection)
            print(text.isEmpty ? "(no words)" : text, terminator: text.hasSuffix("\n") ? "" : "\n")
        }

        /// `conversation ID` and a line of what it is: device, provider, status (and why), when, how much.
        static func header(_ conversation: [String: Any]) -> String {
            var status = conversation["status"] as? String ?? "?"
            if let reason = conversation["status_reason"] as? String { status += " (\(reason))" }
            let audio = (conversation["audio_seconds"] as? Double).map { String(format: "%.1f s of audio", $0) } ?? "?"
            let speakers = ConversationsCommand.speakerNames(conversation)
            return """
            conversation \(conversation["id"] as? String ?? "?")
            device \(conversation["device_id"] as? String ?? "?"), provider \(conversation["provider"] as? String ?? "?"), \(status)
            started \(conversation["started_at"] as? String ?? "-"), ended \(conversation["ended_at"] as? String ?? "-"), \(audio), \
            \(conversation["word_count"] as? Int ?? 0) words, speakers: \(speakers.isEmpty ? "none" : speakers.joined(separator: ", "))
            """
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a conversation and everything stored with it (words, turns, labellings, audio).")

        @Argument(help: "Conversation id.")
        var id: String

        @OptionGroup var connection: ServerConnection

        func run() throws {
            let answer = try connection.json("/v1/conversations/\(ServerConnection.escape(id))", method: "DELETE")
            print("deleted conversation \(answer["deleted"] as? String ?? id)")
        }
    }

    /// The speakers a conversation has, by name; merged ones are counted in the speaker they joined.
    static func speakerNames(_ conversation: [String: Any]) -> [String] {
        (conversation["speakers"] as? [[String: Any]] ?? [])
            .filter { $0["merged_into"] == nil || $0["merged_into"] is NSNull }
            .map { $0["name"] as? String ?? $0["label"] as? String ?? "?" }
    }
}
