import ArgumentParser
import SpeakerSyncClient

/// `--url`, the one server address every client command takes: `http(s)://host:port` or
/// `ws(s)://host:port`, with or without `/v1/listen` (`ServerURL` derives the WebSocket and HTTP URLs).
struct ServerURLOption: ParsableArguments {
    @Option(name: .customLong("url"), help: ArgumentHelp(
        "The server: http(s)://host:port or ws(s)://host:port, with or without /v1/listen (https/wss for a TLS server). Default: the server running on this machine (as serve recorded it), else http://127.0.0.1:8080.",
        valueName: "url"))
    var given: String?

    /// `--url`, else the server `serve` on this machine recorded (`LocalServerRecord`: its port, even
    /// one it chose), else the default address.
    var text: String { given ?? LocalServerRecord.current()?.url ?? "http://127.0.0.1:8080" }

    func validate() throws {
        do {
            _ = try ServerURL(text)
        } catch {
            throw ValidationError("--url: \(error)")
        }
    }

    /// The parsed URL (`validate` has checked it).
    var server: ServerURL {
        get throws {
            do { return try ServerURL(text) } catch { throw CommandFailure("--url: \(error)") }
        }
    }
}
