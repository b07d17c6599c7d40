import ArgumentParser
import Foundation
import SpeakerSyncClient

/// `speakersync health`: is the server ready (`GET /readyz`)? Exit 0 when it is, 1 when it is not or
/// cannot be reached, with its status on standard output — a container HEALTHCHECK without curl.
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Ask a server whether it is ready (GET /readyz): exit 0 when ready, 1 otherwise, printing its status.",
        discussion: "For a container HEALTHCHECK: HEALTHCHECK CMD [\"speakersync\", \"health\"]. /readyz is open: no token is needed.")

    @OptionGroup var url: ServerURLOption

    @OptionGroup var tls: CAFileOption

    @Option(help: "Seconds to wait for the answer (a probe must not hang).")
    var timeout: Int = 5

    func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout must be a positive number of seconds") }
    }

    func run() throws {
        let server = try url.server
        let response: SimpleHTTPResponse
        do {
            response = try SimpleHTTPClient.get(server.http("/readyz"), timeoutSeconds: timeout, caFilePath: tls.caFile)
        } catch {
            print("unreachable: \(server.httpBase): \(error)")
            throw ExitCode.failure
        }
        // The server's own words: {"status":"ok"|"unavailable"|"stopping","database":…}.
        let body = response.json() as? [String: Any]
        let fields = ["status", "database"].compactMap { key in body?[key].map { "\(key) \($0)" } }
        let detail = fields.isEmpty ? response.text.trimmingCharacters(in: .whitespacesAndNewlines).prefix(200).description : fields.joined(separator: ", ")
        guard response.status == 200 else {
            print("not ready: HTTP \(response.status)\(detail.isEmpty ? "" : ": \(detail)")")
            throw ExitCode.failure
        }
        print("ready: \(detail)")
    }
}
