import Foundation
import Logging

/// The account that runs initdb and the server when this process is root: PostgreSQL refuses to
/// run as root, so both go through `setpriv --reuid/--regid --clear-groups` to it.
///
/// It is a system user of its own (`speakersync-pg` by default), not the shared `nobody`: whatever
/// else runs as `nobody` on the host can then neither reach the cluster's socket (inside its 0700
/// folder) nor read its files. `scripts/setup` creates it; a root start finding it missing creates
/// it the same way (`useradd --system`, no home, no login shell).
struct ClusterAccount: Sendable {
    var user: String
    var uid: uid_t
    var gid: gid_t
    /// Its home folder from the password database (HOME in the tools' environment).
    var home: String

    static let useradd = "/usr/sbin/useradd"
    /// Creation is serialised within the process; other processes racing it are handled by
    /// looking the user up again after a failed `useradd`.
    private static let creation = NSLock()

    /// The configured unprivileged account when this process is root (created when missing), nil
    /// otherwise (the tools then run as this process's user).
    static func forCurrentProcess(_ config: EmbeddedPostgresConfig, logger: Logger) throws -> ClusterAccount? {
        guard geteuid() == 0 else { return nil }
        let user = try existingOrCreated(config.unprivilegedUser, logger: logger)
        var gid = user.gid
        if let group = config.unprivilegedGroup {
            guard let entry = getgrnam(group) else {
                throw PGError(code: .clusterAccountUnavailable, message: "group \(group), configured to run PostgreSQL, does not exist")
            }
            gid = entry.pointee.gr_gid
        }
        guard user.uid != 0 else {
            throw PGError(code: .clusterAccountUnavailable, message: "user \(user.name) is root; PostgreSQL must run as an unprivileged user")
        }
        return ClusterAccount(user: user.name, uid: user.uid, gid: gid, home: user.home)
    }

    /// setpriv's arguments that switch to this account, before the `--` and the command.
    var setprivArguments: [String] { ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"] }

    /// The user `name`, created as a system user when missing.
    private static func existingOrCreated(_ name: String, logger: Logger) throws -> SystemUser {
        if let user = SystemUser.named(name) { return user }
        creation.lock()
        defer { creation.unlock() }
        if let user = SystemUser.named(name) { return user }
        guard FileManager.default.isExecutableFile(atPath: useradd) else {
            throw PGError(code: .clusterAccountUnavailable, message: "user \(name), who runs the embedded PostgreSQL when SpeakerSync "
                          + "runs as root, does not exist and \(useradd) is missing; create it (scripts/setup does) or run as another user")
        }
        var lastFailure = ""
        // useradd takes a lock on /etc/passwd: another process creating a user at the same moment
        // (another SpeakerSync, a package install) makes it fail for a short while.
        for attempt in 0..<5 {
            do {
                try ChildProcess.run(URL(fileURLWithPath: useradd), creationArguments(name), runAs: nil, logTo: nil)
                logger.notice("created the system user that runs the embedded PostgreSQL", metadata: ["user": "\(name)"])
            } catch {
                lastFailure = "\(error)"
            }
            if let user = SystemUser.named(name) { return user }
            usleep(UInt32(100_000 * (attempt + 1)))
        }
        throw PGError(code: .clusterAccountUnavailable, message: "user \(name), who runs the embedded PostgreSQL when SpeakerSync runs "
                      + "as root, does not exist and could not be created (\(lastFailure)); create it with: "
                      + ([useradd] + creationArguments(name)).joined(separator: " "))
    }

    /// The same command scripts/setup runs: a system user with its own group, no home folder, no
    /// login shell.
    static func creationArguments(_ name: String) -> [String] {
        ["--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name]
    }
}
