import Foundation

/// The environment the cluster's children (initdb, pg_ctl, postgres, pg_config, useradd) start
/// with: built from an allowlist, never inherited whole.
///
/// Whatever this process holds in its environment (SPEAKERSYNC_ADMIN_KEY, DATABASE_URL,
/// PICOVOICE_ACCESS_KEY, a cloud token) would otherwise reach the postmaster and, through it, every
/// backend and every program a superuser runs with `COPY … FROM PROGRAM`; PostgreSQL needs none of
/// it. Only these pass: PATH (pg_config is found through it), LANG and LC_ALL pinned to C (initdb
/// and the server's messages do not depend on the operator's locale), TZ when set (the log's
/// timestamps), and HOME set to the home of the account that runs the child.
enum ChildEnvironment {
    static let defaultPath = "/usr/local/bin:/usr/bin:/bin"

    /// The variables, from `inherited` (this process's environment) and the child's `home`.
    static func curated(inherited: [String: String] = ProcessInfo.processInfo.environment, home: String?) -> [String: String] {
        var environment = ["PATH": inherited["PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultPath, "LANG": "C", "LC_ALL": "C"]
        if let zone = inherited["TZ"], !zone.isEmpty { environment["TZ"] = zone }
        if let home { environment["HOME"] = home }
        return environment
    }

    /// The home folder of the account a child runs as: `runAs`'s, or this process's user's.
    static func home(of runAs: ClusterAccount?) -> String? {
        runAs?.home ?? (try? SystemUser.current())?.home
    }

    /// `KEY=value` entries for posix_spawn, sorted so a child's environment is the same every run.
    static func entries(_ environment: [String: String]) -> [String] {
        environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
    }
}
