import Foundation
import Logging

/// The password of the cluster's application role, in libpq's password-file format
/// (`host:port:database:user:password`), at `<data folder>.pgpass`.
///
/// Connection strings name the file (`passfile=…`), never the password, so they can be logged,
/// printed in hints and passed to another process of the same user. The file sits beside the data
/// folder, not in it (a base backup of the folder does not carry it), belongs to the owner's user
/// with mode 0600, and is created that way from its first byte (`SecretFile`). The cluster's own
/// account never reads it: the owner sets the role's SCRAM verifier over the superuser connection at
/// every start, so a lost or replaced file only means a new password.
struct ClusterPasswordFile {
    let path: String

    init(dataDirectory: URL) {
        path = dataDirectory.path + ".pgpass"
    }

    /// The role's password from the file, or a new one written to it (the file made anew when it is
    /// missing, lacks the role, or could have been read by someone else).
    func loadOrCreate(role: String, logger: Logger) throws -> String {
        var kept: [String] = []
        switch SecretFile.isPrivate(path) {
        case true?:
            let text = try String(contentsOfFile: path, encoding: .utf8)
            if let password = Self.password(in: text, role: role) { return password }
            kept = text.split(separator: "\n").map(String.init)
        case false?:
            // libpq ignores such a file; and a password others may have read is no secret.
            logger.warning("the embedded PostgreSQL's password file is not private to this user; replacing it and the password",
                           metadata: ["file": "\(path)"])
        case nil:
            break
        }
        let password = Self.newPassword()
        let lines = kept + [Self.line(role: role, password: password)]
        try SecretFile.write(lines.joined(separator: "\n") + "\n", to: path)
        logger.info("wrote a new password for the embedded PostgreSQL's application role", metadata: ["file": "\(path)", "role": "\(role)"])
        return password
    }

    /// 32 random bytes in hex. SystemRandomNumberGenerator is getrandom(2) on Linux: a
    /// cryptographically secure source.
    static func newPassword() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Any host, port and database: the folder (and so the socket's path) may move.
    static func line(role: String, password: String) -> String {
        ["*", "*", "*", escape(role), escape(password)].joined(separator: ":")
    }

    /// The password of the first line whose user is `role` and whose other fields are wildcards.
    static func password(in text: String, role: String) -> String? {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = split(String(line))
            guard fields.count == 5, fields[0] == "*", fields[1] == "*", fields[2] == "*", fields[3] == role,
                  !fields[4].isEmpty else { continue }
            return fields[4]
        }
        return nil
    }

    /// libpq's escaping: `\` before `:` and `\`.
    static func escape(_ field: String) -> String {
        field.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ":", with: "\\:")
    }

    /// A line's fields, `\`-escapes resolved (a `*` stays a wildcard only unescaped; ours never escape it).
    static func split(_ line: String) -> [String] {
        var fields = [""]
        var escaped = false
        for character in line {
            if escaped {
                fields[fields.count - 1].append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":" {
                fields.append("")
            } else {
                fields[fields.count - 1].append(character)
            }
        }
        return fields
    }
}
