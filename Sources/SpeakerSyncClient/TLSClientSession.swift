import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// One TLS client session over a connected, blocking socket, for `SimpleHTTPClient`: owns the
/// `SSL_CTX` and the `SSL` and frees both in `deinit`. The socket stays the caller's: `SSL_set_fd`
/// wraps it with BIO_NOCLOSE, so freeing the session never closes it.
///
/// Verification is not optional: the chain must reach a trust anchor (the CA file when given, else
/// OpenSSL's default store) and the certificate must name `host` (DNS name, or IP address for a
/// literal), checked by OpenSSL during the handshake (`SSL_VERIFY_PEER`).
final class TLSClientSession {
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    /// Performs the handshake; throws `SimpleHTTPError` with OpenSSL's reason when it fails.
    init(socket: Int32, host: String, caFilePath: String?) throws {
        ERR_clear_error() // reasons below must be this session's, not leftovers on this thread
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw Self.failure("SSL_CTX_new") }
        guard let ssl = SSL_new(context) else {
            let error = Self.failure("SSL_new")
            SSL_CTX_free(context)
            throw error
        }
        // From here on deinit frees both, including when the handshake below throws.
        self.context = context
        self.ssl = ssl

        // TLS 1.2 at least (OpenSSL's own default still allows 1.0 when no system policy is set).
        _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil)
        // SSL_OP_IGNORE_UNEXPECTED_EOF (a function-like macro in C): a server that closes without
        // close_notify ends the body like a plain TCP close, as in the http:// path.
        _ = SSL_CTX_set_options(context, UInt64(1) << 7)
        if let caFilePath {
            guard SSL_CTX_load_verify_locations(context, caFilePath, nil) == 1 else {
                throw Self.failure("loading CA file \(caFilePath)")
            }
        } else {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else { throw Self.failure("loading the default CA store") }
        }
        SSL_set_verify(ssl, SSL_VERIFY_PEER, nil)
        if Self.isIPLiteral(host) {
            // An IP address is matched against the certificate's IP SANs; SNI must not carry one (RFC 6066 §3).
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else {
                throw Self.failure("setting the expected IP address \(host)")
            }
        } else {
            guard SSL_set1_host(ssl, host) == 1 else { throw Self.failure("setting the expected host name \(host)") }
            // SSL_set_tlsext_host_name is a macro over SSL_ctrl.
            let sni = host.withCString { SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name), UnsafeMutableRawPointer(mutating: $0)) }
            guard sni == 1 else { throw Self.failure("setting SNI \(host)") }
        }
        guard SSL_set_fd(ssl, socket) == 1 else { throw Self.failure("SSL_set_fd") }
        let result = SSL_connect(ssl)
        guard result == 1 else {
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                throw SimpleHTTPError(description: "TLS handshake with \(host) failed: certificate not trusted: "
                    + String(cString: X509_verify_cert_error_string(verify))
                    + (caFilePath == nil ? " (a self-signed server needs its certificate as the CA file)" : ""))
            }
            throw ioFailure("TLS handshake with \(host)", result: result)
        }
        // SSL_VERIFY_PEER already failed the handshake otherwise; checked again so a future change to
        // the verify mode cannot silently accept an unverified peer.
        guard SSL_get_verify_result(ssl) == X509_V_OK else {
            throw SimpleHTTPError(description: "TLS peer \(host) not verified")
        }
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Writes some of `bytes`; returns how many.
    func write(_ bytes: UnsafeRawBufferPointer) throws -> Int {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        ERR_clear_error()
        let n = SSL_write(ssl, base, Int32(clamping: bytes.count))
        guard n > 0 else { throw ioFailure("TLS write", result: n) }
        return Int(n)
    }

    /// Reads into `buffer`; 0 at the end of the stream.
    func read(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        ERR_clear_error()
        let n = SSL_read(ssl, base, Int32(clamping: buffer.count))
        if n > 0 { return Int(n) }
        if SSL_get_error(ssl, n) == SSL_ERROR_ZERO_RETURN { return 0 }
        throw ioFailure("TLS read", result: n)
    }

    private func ioFailure(_ what: String, result: Int32) -> SimpleHTTPError {
        let code = SSL_get_error(ssl, result)
        if code == SSL_ERROR_SYSCALL, ERR_peek_error() == 0 {
            let reason = errno == 0 ? "connection closed by the peer" : String(cString: strerror(errno))
            return SimpleHTTPError(description: "\(what) failed: \(reason)")
        }
        if code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE {
            return SimpleHTTPError(description: "\(what) failed: timed out")
        }
        return Self.failure(what)
    }

    /// `what` failed, with OpenSSL's queued reasons (oldest first), e.g. "certificate verify failed".
    private static func failure(_ what: String) -> SimpleHTTPError {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return SimpleHTTPError(description: "\(what) failed: \(reasons.isEmpty ? "no OpenSSL reason given" : reasons.joined(separator: "; "))")
    }

    private static func isIPLiteral(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
