import Synchronization

/// Which plugin file each provider's config section went to, so a section never reaches two files.
///
/// Workers ask for the sections of the ids their plugin declares. Two files declaring the same id is
/// already an error (the second file's provider is refused as a duplicate), but that is only known once
/// both have loaded; until then a second file could ask for another plugin's section, the Falcon
/// AccessKey say. The first file to ask for an id keeps it for the server's life (its later workers, a
/// restart or a per-session worker, ask again and get it); another file gets nothing for that id.
final class ConfigurationClaims: Sendable {
    private let owners = Mutex<[String: String]>([:])

    /// The ids of `wanted` that `pluginPath` may have; the others are claimed by another file.
    func grant(_ wanted: [String], to pluginPath: String) -> (granted: [String], refused: [String]) {
        owners.withLock { owners in
            var granted: [String] = []
            var refused: [String] = []
            for id in wanted {
                if let owner = owners[id], owner != pluginPath {
                    refused.append(id)
                } else {
                    owners[id] = pluginPath
                    granted.append(id)
                }
            }
            return (granted, refused)
        }
    }
}
