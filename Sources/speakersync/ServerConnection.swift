import ArgumentParser
import Foundation
import SpeakerSyncClient

/// What a client command that calls the HTTP API needs: the server (`--url`), the credential
/// (`--token` / SPEAKERSYNC_TOKEN) and the CA to trust for https (`--ca-file`).
struct ServerConnection: ParsableArguments {
    @OptionGroup var url: ServerURLOption
    @OptionGroup var credential: ClientCredentialOptions
    @OptionGroup var tls: CAFileOption

    /// Sends one request; a status outside 2xx is thrown as the server's own message (`CommandFailure`).
    func request(_ method: String, _ route: String, body: [UInt8] = [], contentType: String = "application/json") throws -> SimpleHTTPResponse {
        try Self.send(method, route, to: url.server, token: credential.token, caFile: tls.caFile, body: body, contentType: contentType)
    }

    func get(_ route: String) throws -> SimpleHTTPResponse { try request("GET", route) }

    /// A JSON object answer (anything else is an error: this client and the server disagree).
    func json(_ route: String, method: String = "GET") throws -> [String: Any] {
        try Self.object(of: request(method, route), method: method, route: route)
    }

    /// One request with a given credential (the admin commands present the admin key, not `--token`).
    static func send(_ method: String, _ route: String, to server: ServerURL, token: String?, caFile: String?,
                     body: [UInt8] = [], contentType: String = "application/json") throws -> SimpleHTTPResponse {
        let response: SimpleHTTPResponse
        do {
            response = try SimpleHTTPClient.request(method: method, url: server.http(route), body: body, contentType: contentType,
                                                    token: token, caFilePath: caFile)
        } catch {
            throw CommandFailure("cannot reach the server at \(server.httpBase): \(error)")
        }
        guard (200..<300).contains(response.status) else { throw CommandFailure(refusal: response) }
        return response
    }

    static func object(of response: SimpleHTTPResponse, method: String, route: String) throws -> [String: Any] {
        guard let object = response.json() as? [String: Any] else {
            throw CommandFailure("\(method) \(route): the server's answer is not a JSON object: \(response.text.prefix(200))")
        }
        return object
    }

    /// One path segment (an id, a device), percent-encoded so a `/` or `?` in it cannot change the route.
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}
