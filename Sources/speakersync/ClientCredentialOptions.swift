import ArgumentParser
import Foundation
import SpeakerSyncServer

/// The credential a client command presents: `--token`, else SPEAKERSYNC_TOKEN. A device token acts
/// as its device; the admin key acts as anyone.
struct ClientCredentialOptions: ParsableArguments {
    @Option(name: .customLong("token"), help: ArgumentHelp(
        "Device token or admin key (default: SPEAKERSYNC_TOKEN). Prefer the variable: arguments show in ps.",
        valueName: "token"))
    var tokenOption: String?

    var token: String? {
        tokenOption ?? ProcessInfo.processInfo.environment["SPEAKERSYNC_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// The admin key an admin command presents: `--admin-key`, SPEAKERSYNC_ADMIN_KEY, or the file a
/// server wrote when it generated one (`--admin-key-file`, default `<data dir>.admin-key`).
struct AdminCredentialOptions: ParsableArguments {
    @Option(name: .customLong("admin-key"), help: ArgumentHelp("The admin key (default: SPEAKERSYNC_ADMIN_KEY, then --admin-key-file).", valueName: "key"))
    var adminKey: String?

    @Option(name: .customLong("admin-key-file"), help: ArgumentHelp("File holding the admin key (default: <data dir>.admin-key).", valueName: "file"))
    var adminKeyFile: String?

    func resolve(dataDirectory: String, recordedKeyFile: String? = nil) throws -> String {
        try resolveWithSource(dataDirectory: dataDirectory, recordedKeyFile: recordedKeyFile).key
    }

    /// The key, and the file it was read from (nil when it came from the option or the environment).
    /// `recordedKeyFile`: the file the local server recorded (`LocalServerRecord`), used before the
    /// data folder's default.
    func resolveWithSource(dataDirectory: String, recordedKeyFile: String? = nil) throws -> (key: String, file: String?) {
        if let adminKey, !adminKey.isEmpty { return (adminKey, nil) }
        if let key = ProcessInfo.processInfo.environment["SPEAKERSYNC_ADMIN_KEY"], !key.isEmpty { return (key, nil) }
        let path = adminKeyFile ?? recordedKeyFile ?? AccessConfig.defaultAdminKeyFile(dataDirectory: dataDirectory)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CommandFailure("no admin key: pass --admin-key, set SPEAKERSYNC_ADMIN_KEY, or point --admin-key-file at the file the server wrote (\(path) not readable)")
        }
        return (text.trimmingCharacters(in: .whitespacesAndNewlines), path)
    }
}
