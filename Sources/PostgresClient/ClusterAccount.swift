import Foundation

/// The account that runs initdb and the server when this process is root: PostgreSQL refuses to
/// run as root, so both go through `setpriv --reuid/--regid --clear-groups` to it.
struct ClusterAccount: Sendable {
    var user: String
    var group: String
    var uid: uid_t
    var gid: gid_t

    /// The configured unprivileged account when this process is root, nil otherwise (the tools then
    /// run as this process's user).
    static func forCurrentProcess(_ config: EmbeddedPostgresConfig) throws -> ClusterAccount? {
        guard geteuid() == 0 else { return nil }
        guard let passwd = getpwnam(config.unprivilegedUser) else {
            throw PGError(code: .clusterFailed,
                          message: "user \(config.unprivilegedUser) does not exist; it is needed to run PostgreSQL as root")
        }
        let gid = getgrnam(config.unprivilegedGroup)?.pointee.gr_gid ?? passwd.pointee.pw_gid
        return ClusterAccount(user: config.unprivilegedUser, group: config.unprivilegedGroup,
                              uid: passwd.pointee.pw_uid, gid: gid)
    }

    /// setpriv's arguments that switch to this account, before the `--` and the command.
    var setprivArguments: [String] { ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"] }
}
