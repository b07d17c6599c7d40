import ChildProcesses
import Foundation
import SpeakerSyncClient
import Testing
import TestSupport
@testable import WebSocketTransport

/// The server's TLS follows Mozilla's "intermediate" profile (issue 28): TLS 1.2 and 1.3 only, for
/// TLS 1.2 only forward-secret ECDHE suites, and every HTTPS answer carries HSTS. Checked with the
/// `openssl s_client` a security reviewer would use, offering one version or suite at a time.
@Suite("TLS profile: versions, suites and HSTS")
struct TLSProfileTests {
    private func startTLSServer() throws -> (WebSocketServer, Int) {
        let files = try TestCertificates.get()
        var config = WebSocketServerConfig.default
        config.tls = TLSFiles(certificatePath: files.certificate, privateKeyPath: files.key)
        return try startServer(ScriptedHandler(), http: WhoAmIHandler(), config: config)
    }

    /// `openssl s_client` against the port with `arguments`; the suite it negotiated, nil when the handshake failed.
    private func negotiated(port: Int, _ arguments: [String]) throws -> String? {
        var configuration = Subprocess.Configuration(executable: "/usr/bin/openssl",
                                                     arguments: ["s_client", "-connect", "127.0.0.1:\(port)", "-brief"] + arguments)
        configuration.standardOutput = .pipe
        configuration.standardError = .standardOutput
        let done = try Subprocess.run(configuration)
        let text = done.standardOutputText
        guard done.exit.succeeded else { return nil }
        // -brief prints "Ciphersuite: NAME" once the handshake is done.
        return text.split(separator: "\n").first { $0.hasPrefix("Ciphersuite:") }
            .map { $0.dropFirst("Ciphersuite:".count).trimmingCharacters(in: .whitespaces) }
    }

    @Test func tls12OffersOnlyForwardSecretSuitesAndTls13Works() throws {
        let (server, port) = try startTLSServer()
        defer { server.shutdown() }
        // The suite the reproduction negotiated (no forward secrecy), and other legacy ones: refused.
        for legacy in ["AES256-SHA256", "AES128-GCM-SHA256", "AES256-SHA", "ECDHE-RSA-AES256-SHA384", "ECDHE-RSA-AES128-SHA"] {
            #expect(try negotiated(port: port, ["-tls1_2", "-cipher", legacy + ":@SECLEVEL=0"]) == nil, "\(legacy) was accepted")
        }
        #expect(try negotiated(port: port, ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"]) == "ECDHE-RSA-AES128-GCM-SHA256")
        #expect(try negotiated(port: port, ["-tls1_2", "-cipher", "ECDHE-RSA-CHACHA20-POLY1305"]) == "ECDHE-RSA-CHACHA20-POLY1305")
        #expect(try negotiated(port: port, ["-tls1_3"]) != nil)
    }

    @Test func tls10And11AreRefused() throws {
        let (server, port) = try startTLSServer()
        defer { server.shutdown() }
        for version in ["-tls1", "-tls1_1"] {
            // SECLEVEL=0 lets this client offer them; the refusal is the server's.
            #expect(try negotiated(port: port, [version, "-cipher", "DEFAULT:@SECLEVEL=0"]) == nil, "\(version) was accepted")
        }
    }

    @Test func httpsAnswersCarryHSTSAndPlaintextOnesDoNot() throws {
        let files = try TestCertificates.get()
        let (server, port) = try startTLSServer()
        defer { server.shutdown() }
        for path in ["/whoami", "/missing"] {
            let response = try SimpleHTTPClient.get("https://127.0.0.1:\(port)\(path)", caFilePath: files.certificate)
            #expect(response.headers["strict-transport-security"] == "max-age=63072000", "\(path)")
        }
        let (plain, plainPort) = try startServer(ScriptedHandler(), http: WhoAmIHandler())
        defer { plain.shutdown() }
        let response = try SimpleHTTPClient.get("http://127.0.0.1:\(plainPort)/whoami")
        #expect(response.status == 200)
        #expect(response.headers["strict-transport-security"] == nil)
    }
}
