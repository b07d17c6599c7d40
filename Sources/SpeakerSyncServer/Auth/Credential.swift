/// The text form of SpeakerSync credentials: `sst_<id>_<secret>` (device tokens) and
/// `ssa_<id>_<secret>` (admin keys). The id (8 random bytes, hex) is public: it names the credential in
/// lists, logs and revocations. The secret is 32 random bytes (256 bits), hex. Only the SHA-256 of the
/// whole text is stored; a presented credential is found by its id and its digest compared in constant
/// time. The prefix lets secret scanners and people tell a SpeakerSync credential when they see one;
/// hex keeps it valid in `Authorization`, `Sec-WebSocket-Protocol` and a query string unescaped.
public struct Credential: Sendable, Equatable {
    public enum Kind: String, Sendable {
        case deviceToken = "sst"
        case adminKey = "ssa"
    }

    public var kind: Kind
    public var id: String
    /// The whole credential text; shown to its owner once, never stored or logged.
    public var text: String

    /// The digest stored for it (lower-case hex of SHA-256 over `text`).
    public var digest: String { Self.digest(of: text) }

    public static let idBytes = 8
    public static let secretBytes = 32

    /// A new random credential.
    public static func generate(_ kind: Kind) throws -> Credential {
        let id = hex(try OpenSSLCalls.randomBytes(idBytes))
        let secret = hex(try OpenSSLCalls.randomBytes(secretBytes))
        return Credential(kind: kind, id: id, text: "\(kind.rawValue)_\(id)_\(secret)")
    }

    /// Splits a presented text into kind and id; nil when it is not in SpeakerSync's form (the secret
    /// is not checked here: that is the digest comparison's job).
    public static func parse(_ text: String) -> (kind: Kind, id: String)? {
        // On UTF-8 bytes, like every per-request step of the check.
        let bytes = Array(text.utf8)
        let idStart = 4, secretStart = 4 + idBytes * 2 + 1
        guard bytes.count == secretStart + secretBytes * 2, bytes[3] == UInt8(ascii: "_"), bytes[secretStart - 1] == UInt8(ascii: "_"),
              let kind = Kind(rawValue: String(decoding: bytes[0..<3], as: UTF8.self)) else { return nil }
        func isHex(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte | 0x20) }
        guard bytes[idStart..<(secretStart - 1)].allSatisfy(isHex), bytes[secretStart...].allSatisfy(isHex) else { return nil }
        return (kind, String(decoding: bytes[idStart..<(secretStart - 1)], as: UTF8.self))
    }

    public static func digest(of text: String) -> String { hex(OpenSSLCalls.sha256(text)) }

    /// Constant-time equality of two hex digests (as bytes; lengths are public).
    public static func digestsMatch(_ a: String, _ b: String) -> Bool {
        OpenSSLCalls.constantTimeEqual(Array(a.utf8), Array(b.utf8))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// What may be shown of a presented credential in a log line or error: its public id, or nothing.
    public static func redacted(_ text: String) -> String {
        if let (kind, id) = parse(text) { return "\(kind.rawValue)_\(id)_…" }
        return "[redacted]"
    }
}
