import ArgumentParser
import Foundation
import SpeakerSyncClient
import SpeakerSyncServer

/// `speakersync token create|list|revoke`: device tokens, through the server's admin routes.
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Create, list and revoke device tokens (needs the admin key).",
        subcommands: [Create.self, List.self, Revoke.self, RotateAdminKey.self])

    struct Connection: ParsableArguments {
        @OptionGroup var url: ServerURLOption

        @OptionGroup var admin: AdminCredentialOptions

        @Option(name: .customLong("data-dir"), help: "The server's data folder (where it wrote a generated admin key). Default: the running local server's, as serve recorded it, else the default folder.")
        var givenDataDirectory: String?

        /// The local server's own record names its key file, wherever `--data-dir`/`--admin-key-file` put it.
        var recordedKeyFile: String? { givenDataDirectory == nil && url.given == nil ? LocalServerRecord.current()?.adminKeyFile : nil }

        var dataDirectory: String { givenDataDirectory ?? ResourceLocator.defaultDataDirectory() }

        @OptionGroup var tls: CAFileOption

        func call(_ method: String, _ path: String) throws -> [String: Any] {
            let key = try admin.resolve(dataDirectory: dataDirectory, recordedKeyFile: recordedKeyFile)
            let response = try ServerConnection.send(method, path, to: url.server, token: key, caFile: tls.caFile)
            return try ServerConnection.object(of: response, method: method, route: path)
        }
    }

    static func escape(_ text: String) -> String { ServerConnection.escape(text) }

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a token for a device; prints it once.")
        @Option(help: "The device the token acts as.") var device: String
        @Option(help: "A note to tell tokens apart (e.g. 'Ana's phone').") var label: String = ""
        @OptionGroup var connection: Connection

        func run() throws {
            let object = try connection.call("POST", "/v1/devices/\(TokenCommand.escape(device))/tokens?label=\(TokenCommand.escape(label))")
            print(object["token"] as? String ?? "")
            FileHandle.standardError.write(Data("token \(object["token_id"] as? String ?? "?") for device \(device): shown once, keep it secret (SPEAKERSYNC_TOKEN)\n".utf8))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens (ids, labels, dates; never secrets).")
        @Option(help: "Only this device's tokens.") var device: String?
        @OptionGroup var connection: Connection

        func run() throws {
            let path = device.map { "/v1/devices/\(TokenCommand.escape($0))/tokens" } ?? "/v1/tokens"
            for token in try connection.call("GET", path)["tokens"] as? [[String: Any]] ?? [] {
                let revoked = (token["revoked_at"] as? String).map { "  REVOKED \($0)" } ?? ""
                print("\(token["token_id"] as? String ?? "?")  \(token["device_id"] as? String ?? "?")  \(token["created_at"] as? String ?? "")  \(token["label"] as? String ?? "")\(revoked)")
            }
        }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token now; its open sessions close with 4003.")
        @Option(help: "The token's device.") var device: String
        @Argument(help: "The token id (from list).") var tokenID: String
        @OptionGroup var connection: Connection

        func run() throws {
            _ = try connection.call("DELETE", "/v1/devices/\(TokenCommand.escape(device))/tokens/\(TokenCommand.escape(tokenID))")
            print("revoked \(tokenID)")
        }
    }

    struct RotateAdminKey: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rotate-admin-key", abstract: "Replace the stored admin key; prints the new one once.")
        @OptionGroup var connection: Connection

        func run() throws {
            let source = try connection.admin.resolveWithSource(dataDirectory: connection.dataDirectory, recordedKeyFile: connection.recordedKeyFile).file
            let key = try connection.call("POST", "/v1/admin/key")["admin_key"] as? String ?? ""
            print(key)
            var note = "the previous stored admin key no longer works; its sessions were closed"
            // The key was read from a file: that file now holds the new one (still 0600), or the next
            // command would present the revoked key.
            if let source {
                do {
                    try AdminKeyFile.write(key, to: source)
                    note += "; \(source) holds the new key"
                } catch {
                    note += "; could not update \(source): it still holds the old key"
                }
            }
            FileHandle.standardError.write(Data((note + "\n").utf8))
        }
    }
}
