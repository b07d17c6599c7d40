import Foundation

/// An operating-system user as the password database knows it.
struct SystemUser: Sendable, Equatable {
    var name: String
    var uid: uid_t
    var gid: gid_t
    var home: String

    /// The user named `name`, nil when there is none.
    static func named(_ name: String) -> SystemUser? {
        guard let entry = getpwnam(name) else { return nil }
        return SystemUser(entry.pointee)
    }

    /// The user this process runs as (its effective uid).
    static func current() throws -> SystemUser {
        guard let entry = getpwuid(geteuid()) else {
            throw PGError(code: .clusterFailed, message: "this process's user (uid \(geteuid())) has no entry in the password "
                          + "database; PostgreSQL needs one to run and to recognise who connects")
        }
        return SystemUser(entry.pointee)
    }

    private init(_ entry: passwd) {
        name = String(cString: entry.pw_name)
        uid = entry.pw_uid
        gid = entry.pw_gid
        home = String(cString: entry.pw_dir)
    }

    init(name: String, uid: uid_t, gid: gid_t, home: String) {
        self.name = name
        self.uid = uid
        self.gid = gid
        self.home = home
    }
}
