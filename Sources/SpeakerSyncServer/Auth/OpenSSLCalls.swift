import COpenSSL

/// Every libcrypto call the credentials make, in one place: random bytes from the OS-seeded CSPRNG,
/// SHA-256, and a comparison whose time does not depend on where two digests differ.
enum OpenSSLCalls {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `count` bytes from `RAND_bytes` (OpenSSL's DRBG, seeded from getrandom).
    static func randomBytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard status == 1 else { throw Failure(description: "RAND_bytes failed (\(ERR_get_error()))") }
        return bytes
    }

    /// SHA-256 of the UTF-8 bytes of `text`.
    static func sha256(_ text: String) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        var bytes = Array(text.utf8)
        let status = digest.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeMutableBufferPointer { input in
                EVP_Digest(input.baseAddress, input.count, out.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        precondition(status == 1 && length == 32, "EVP_Digest(SHA-256) failed") // only fails without memory
        return digest
    }

    /// True when both are equal, in time that depends only on the length (`CRYPTO_memcmp`).
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count, !a.isEmpty else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }
}
