import ArgumentParser
import Foundation
import SpeakerSyncClient

struct TranscriptCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "transcript", abstract: "Print a stored conversation's labelled transcript.")

    @Argument(help: "Conversation id.")
    var id: String

    @Option(help: "json, text, srt, vtt or rttm.")
    var format: String = "text"

    @OptionGroup var connection: ServerConnection

    func run() throws {
        let text = try Self.fetch(id, format: format, from: connection)
        print(text, terminator: text.hasSuffix("\n") || text.isEmpty ? "" : "\n")
    }

    /// The stored transcript in one of the server's formats (`conversations show` prints it too).
    static func fetch(_ id: String, format: String, from connection: ServerConnection) throws -> String {
        let escapedFormat = format.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? format
        return try connection.get("/v1/conversations/\(ServerConnection.escape(id))/transcript?format=\(escapedFormat)").text
    }
}
