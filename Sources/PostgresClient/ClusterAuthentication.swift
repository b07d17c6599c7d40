import Foundation

/// Who may connect to the embedded cluster, as pg_hba.conf and pg_ident.conf say it. Both files are
/// SpeakerSync's: written before every start of the server, so a cluster initialised by an older
/// SpeakerSync with `trust` is never started with it again.
///
/// - The superuser: only over the private socket, only with `peer` authentication, and only for the
///   operating-system user the owner runs as (root, or the user who started it), through the map
///   `speakersync_owner`. That user can already read and rewrite the data folder, so this grants
///   nothing new; no superuser password exists anywhere to be stolen.
/// - Every other role (the server's `speakersync_app`): SCRAM-SHA-256 with its password. libpq
///   reads it from `<data folder>.pgpass` (0600), which works whichever user the cluster runs as.
/// - Nothing is `trust`. The TCP lines are inert (`listen_addresses = ''`) but would ask for a
///   password too.
///
/// The socket itself lives in the 0700 data folder of the cluster's account: only that account and
/// root reach it at all.
enum ClusterAuthentication {
    static let mapName = "speakersync_owner"

    /// pg_hba.conf.
    static func hostBasedRules(superuser: String) -> String {
        """
        # Written by SpeakerSync before every start of the embedded PostgreSQL; edits here are replaced.
        # Nothing is trusted: the superuser connects only over the private socket, as the operating-system
        # user that runs SpeakerSync (peer, map \(mapName) in pg_ident.conf); every other role with its
        # password (SCRAM-SHA-256).
        # TYPE  DATABASE  USER  ADDRESS  METHOD
        local   all   \(quoted(superuser))   peer map=\(mapName)
        local   all   all   scram-sha-256
        host    all   all   127.0.0.1/32   scram-sha-256
        host    all   all   ::1/128   scram-sha-256

        """
    }

    /// pg_ident.conf: the owner's operating-system user may act as the superuser.
    static func identityMap(ownerUser: String, superuser: String) -> String {
        """
        # Written by SpeakerSync before every start of the embedded PostgreSQL; edits here are replaced.
        # MAPNAME  SYSTEM-USERNAME  PG-USERNAME
        \(mapName)   \(quoted(ownerUser))   \(quoted(superuser))

        """
    }

    /// The rules of a pg_hba.conf text whose method is `trust` (comments and blank lines skipped).
    static func trustRules(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { raw -> String? in
            let line = raw.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty else { return nil }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            // local DATABASE USER METHOD; host… DATABASE USER ADDRESS [MASK] METHOD [OPTIONS]: trust
            // takes no options, so a rule trusting anyone has it as a whole field.
            return fields.dropFirst(3).contains("trust") ? line : nil
        }
    }

    /// A double-quoted token (pg_hba.conf's quoting: a quoted word is taken literally, never as a
    /// keyword such as `all`). Names holding a quote or a line break are refused earlier.
    static func quoted(_ token: String) -> String { "\"" + token + "\"" }

    /// Whether `name` can be written as a token of these files.
    static func isWritable(_ name: String) -> Bool {
        !name.isEmpty && !name.contains { $0 == "\"" || $0.isNewline || $0 == "\0" }
    }
}
