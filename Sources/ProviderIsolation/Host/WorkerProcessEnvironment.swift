/// The environment a provider worker starts with: chosen by name from the server's, never inherited
/// whole.
///
/// A worker runs third-party plugin code; whatever the server holds in its environment (the admin
/// key, DATABASE_URL and its password, PGPASSWORD, a cloud token) would be one `getenv` away from
/// it, and in /proc/PID/environ for as long as it lives. What passes:
///
/// - what programs and loaders need: PATH, HOME, TMPDIR, USER, LOGNAME, LANG, LC_*, TZ,
///   LD_LIBRARY_PATH;
/// - the numeric libraries' tuning: OMP_*, OPENBLAS_*, CUDA_VISIBLE_DEVICES;
/// - SWIFT_BACKTRACE (set to a compact crash report when the operator did not choose one);
/// - SpeakerSync's own settings, SPEAKERSYNC_* (model and library paths), except its secrets
///   (SPEAKERSYNC_ADMIN_KEY, SPEAKERSYNC_TOKEN) and where the server keeps what plugins must not
///   find (SPEAKERSYNC_DATA_DIR, SPEAKERSYNC_PROVIDER_CONFIG, SPEAKERSYNC_SCHEMA_DIR).
///
/// Not PICOVOICE_ACCESS_KEY: the server puts it in the `falcon` section of the provider
/// configuration, which only the worker whose plugin declares `falcon` receives (`.configure`).
/// TMPDIR is the worker's private temporary folder when the server made one.
enum WorkerProcessEnvironment {
    static let names: Set<String> = [
        "PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "LANG", "TZ", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
        "SWIFT_BACKTRACE",
    ]
    static let prefixes = ["LC_", "OMP_", "OPENBLAS_", "SPEAKERSYNC_"]
    /// Never passed, whatever the lists above say.
    static let secrets: Set<String> = [
        "SPEAKERSYNC_ADMIN_KEY", "SPEAKERSYNC_TOKEN", "SPEAKERSYNC_DATA_DIR", "SPEAKERSYNC_PROVIDER_CONFIG", "SPEAKERSYNC_SCHEMA_DIR",
    ]
    static let defaultBacktrace = "enable=yes,interactive=no,color=no,threads=crashed,registers=none,images=none,limit=48"

    /// The worker's `NAME=value` entries from the server's (`inherited`, in the same form).
    static func curated(_ inherited: [String], temporaryFolder: String? = nil) -> [String] {
        var kept = inherited.filter { entry in
            guard let equals = entry.firstIndex(of: "=") else { return false }
            return passes(String(entry[..<equals]))
        }
        if let temporaryFolder {
            kept.removeAll { $0.hasPrefix("TMPDIR=") }
            kept.append("TMPDIR=\(temporaryFolder)")
        }
        if !kept.contains(where: { $0.hasPrefix("SWIFT_BACKTRACE=") }) {
            kept.append("SWIFT_BACKTRACE=\(defaultBacktrace)")
        }
        return kept
    }

    static func passes(_ name: String) -> Bool {
        guard !secrets.contains(name) else { return false }
        return names.contains(name) || prefixes.contains { name.hasPrefix($0) }
    }
}
