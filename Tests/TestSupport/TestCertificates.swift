import ChildProcesses
import Foundation

/// Self-signed certificates made with the `openssl` CLI at test time (nothing secret is committed).
public struct TestCertificates: Sendable {
    public let directory: String
    /// CN=localhost, SAN IP:127.0.0.1 and DNS:localhost: the server's certificate and its own CA.
    public var certificate: String { directory + "/cert.pem" }
    public var key: String { directory + "/key.pem" }
    /// A second self-signed pair naming only other.example: trusted as a CA, wrong for 127.0.0.1.
    public var otherCertificate: String { directory + "/other-cert.pem" }
    public var otherKey: String { directory + "/other-key.pem" }
    public var garbage: String { directory + "/garbage.pem" }

    /// Made once per test process; every test reads the same files.
    static let shared: Result<TestCertificates, any Error> = Result { try make() }

    public static func get() throws -> TestCertificates { try shared.get() }

    private static func make() throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("speakersync-tls-\(ProcessInfo.processInfo.processIdentifier)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let files = TestCertificates(directory: directory)
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", files.key, "-out", files.certificate,
                     "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        try openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", files.otherKey, "-out", files.otherCertificate,
                     "-days", "1", "-subj", "/CN=other.example", "-addext", "subjectAltName=DNS:other.example"])
        try Data("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n".utf8)
            .write(to: URL(fileURLWithPath: files.garbage))
        return files
    }

    private static func openssl(_ arguments: [String]) throws {
        let done = try Subprocess.run(Subprocess.Configuration(executable: "/usr/bin/env", arguments: ["openssl"] + arguments))
        guard done.exit.succeeded else {
            throw CertificateError(description: "openssl \(arguments.first ?? "") ended with \(done.exit): \(done.standardErrorText.prefix(500))")
        }
    }
}

public struct CertificateError: Error, CustomStringConvertible {
    public var description: String
}
