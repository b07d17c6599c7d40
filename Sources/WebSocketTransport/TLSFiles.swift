#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The PEM files a TLS server presents: its certificate (chain) and the matching private key.
///
/// Paths are read by lws (OpenSSL) when the server is created, not later: replacing the files
/// needs a new `WebSocketServer`.
public struct TLSFiles: Sendable, Equatable {
    /// PEM certificate, optionally followed by its intermediates (leaf first).
    public var certificatePath: String
    /// PEM private key of the certificate, unencrypted (lws is given no passphrase).
    public var privateKeyPath: String

    public init(certificatePath: String, privateKeyPath: String) {
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
    }

    /// Checks both files before lws sees them, so the usual mistakes (a typo, a file root-only
    /// readable, the two paths swapped) are reported by name instead of as one lws context failure.
    /// What this cannot see (a key that does not match the certificate, a corrupt PEM body) lws
    /// rejects in `lws_create_context`.
    func validate() throws {
        let certificate = try Self.readPEM(certificatePath, role: "certificate")
        guard certificate.contains("-----BEGIN CERTIFICATE-----") else {
            throw TransportError(.tlsFileInvalid, "TLS certificate \(certificatePath) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        let key = try Self.readPEM(privateKeyPath, role: "private key")
        guard key.contains("PRIVATE KEY-----") else {
            throw TransportError(.tlsFileInvalid, "TLS private key \(privateKeyPath) holds no PEM private key (-----BEGIN ... PRIVATE KEY-----)")
        }
        guard !key.contains("ENCRYPTED PRIVATE KEY"), !key.contains("Proc-Type: 4,ENCRYPTED") else {
            throw TransportError(.tlsFileInvalid, "TLS private key \(privateKeyPath) is encrypted; give an unencrypted key (no passphrase is passed to lws)")
        }
    }

    /// Checks a client's CA file (PEM certificates to trust) the same way: lws only logs when it cannot
    /// load one and then fails every wss:// handshake, which would hide the real mistake.
    static func validateCAFile(_ path: String) throws {
        let text = try readPEM(path, role: "CA file")
        guard text.contains("-----BEGIN CERTIFICATE-----") else {
            throw TransportError(.tlsFileInvalid, "TLS CA file \(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
    }

    /// Reads a (small) regular file with the process's own permissions, as lws will.
    private static func readPEM(_ path: String, role: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw TransportError(.tlsFileUnreadable, "cannot read TLS \(role) \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw TransportError(.tlsFileUnreadable, "TLS \(role) \(path) is not a regular file")
        }
        guard info.st_size > 0, info.st_size <= 1 << 20 else {
            throw TransportError(.tlsFileInvalid, "TLS \(role) \(path) is \(info.st_size == 0 ? "empty" : "larger than 1 MiB")")
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let n = bytes[filled...].withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                throw TransportError(.tlsFileUnreadable, "reading TLS \(role) \(path) failed: \(n < 0 ? String(cString: strerror(errno)) : "short read")")
            }
            filled += n
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
