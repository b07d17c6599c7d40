import CProviderProcess
import Foundation

/// What a Landlock rule lets a worker do beneath a path (provider_sandbox.c's access levels).
enum LandlockAccess: Int32, Sendable, Equatable {
    case read = 0
    case readExecute = 1
    case readWrite = 2
}

/// One allowance of the worker's Landlock ruleset.
struct LandlockRule: Sendable, Equatable, CustomStringConvertible {
    var path: String
    var access: LandlockAccess

    var description: String { "\(path) (\(access))" }
}

/// The files a worker may still reach once its plugin is loaded (docs/security.md, "The provider
/// sandbox"): everything else, the admin key file, the provider config file, PostgreSQL's folder,
/// the server's data folder and every writable folder of the machine, answers EACCES.
///
/// The server computes the list when it starts a worker (a pure function, so the list is unit-tested)
/// and passes it as arguments; provider_sandbox.c puts it in force before the worker's main, so the
/// plugin's load and init() already run inside it:
/// - read: the system's libraries and settings (`/usr`, `/lib`, `/lib64`, `/etc`), the plugin's folder,
///   the worker executable's, and the folder of every executable file the server has mapped (the
///   worker is the same program: the Swift runtime and the libraries it links);
/// - read: the model locations it was configured with: absolute paths among its provider config
///   sections' string values and the model and library variables of the environment (a file's whole folder, as models
///   come with neighbours such as external weights), and the vendor folders scripts/setup fills;
/// - read: /proc and the machine facts runtimes read (CPU count and cache sizes, cgroup quotas);
///   `/dev/urandom` and `/dev/random`;
/// - read and write: `/dev/null` and the private temporary folder the server made for this worker.
struct LandlockRules: Sendable, Equatable {
    static let systemFolders = ["/usr", "/lib", "/lib64", "/etc"]
    /// `/proc` whole, not just /proc/self: Dispatch reads /proc/TID/stat of its own threads, and a
    /// thread's /proc/TID is not beneath /proc/self for Landlock. Other processes' entries stay shut by
    /// the kernel's own checks: workers are not dumpable (ProviderSandbox.confine), so their memory and
    /// environment belong to root, as the server's do when it runs as root.
    static let machineFacts = ["/proc", "/sys/devices/system/cpu", "/sys/devices/system/node", "/sys/fs/cgroup",
                               "/dev/urandom", "/dev/random"]

    var rules: [LandlockRule]

    /// - pluginPath, workerExecutable: the plugin file the worker loads, and the program it runs.
    /// - mappedFiles: the server's /proc/self/maps text (only executable mappings count: libraries,
    ///   never a data file the server happens to map).
    /// - configSections: the server's provider config sections (JSON text): their paths are model
    ///   locations. Only the worker's own sections reach it, but the paths of all are allowed.
    /// - environment: the worker's environment.
    /// - vendorFolders: the vendor locations models and libraries are found in.
    /// - temporaryFolder: the worker's private temporary folder, if the server made one.
    init(pluginPath: String, workerExecutable: String, mappedFiles: String, configSections: [String], environment: [String: String],
         vendorFolders: [String], temporaryFolder: String?) {
        var read: [String] = Self.systemFolders + Self.machineFacts
        read.append((pluginPath as NSString).deletingLastPathComponent)
        read.append((workerExecutable as NSString).deletingLastPathComponent)
        read += Self.folders(ofMappedFiles: mappedFiles)
        for section in configSections { read += Self.absolutePaths(inJSON: section).map(Self.folderHolding) }
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where Self.namesModelLocation(name) && value.hasPrefix("/") {
            read.append(Self.folderHolding(value))
        }
        read += vendorFolders
        var rules: [LandlockRule] = []
        var seen: Set<String> = []
        for path in read where path != "/" && !path.isEmpty && seen.insert(path).inserted {
            rules.append(LandlockRule(path: path, access: .read))
        }
        rules.append(LandlockRule(path: "/dev/null", access: .readWrite))
        if let temporaryFolder { rules.append(LandlockRule(path: temporaryFolder, access: .readWrite)) }
        self.rules = rules
    }

    /// The folders of the executable files in a /proc/PID/maps text (the sixth column, when it is a
    /// path and the mapping's permissions include x).
    static func folders(ofMappedFiles maps: String) -> [String] {
        var folders: [String] = []
        var seen: Set<String> = []
        for line in maps.split(separator: "\n") {
            let columns = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard columns.count == 6, columns[1].contains("x") else { continue }
            var path = columns[5].trimmingCharacters(in: .whitespaces)
            // A file deleted since it was mapped: its folder still names where it came from.
            if path.hasSuffix(" (deleted)") { path.removeLast(" (deleted)".count) }
            guard path.hasPrefix("/") else { continue }
            let folder = (path as NSString).deletingLastPathComponent
            guard !isShared(folder) else { continue }
            if seen.insert(folder).inserted { folders.append(folder) }
        }
        return folders
    }

    /// A `SPEAKERSYNC_*` variable that names where models or libraries are (`SPEAKERSYNC_MODELS`,
    /// `SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL`, `SPEAKERSYNC_SHERPA_LIB`, …); never the data folder.
    static func namesModelLocation(_ name: String) -> Bool {
        guard name.hasPrefix("SPEAKERSYNC_") else { return false }
        return ["_MODEL", "_MODELS", "_LIB", "_LIBRARY", "_PATH"].contains { name.hasSuffix($0) }
    }

    /// Folders a mapping may sit in that hold other processes' things (`/dev/zero (deleted)` is how a
    /// shared anonymous mapping shows, a memfd shows as `/memfd:…`): never opened up for a mapping.
    static func isShared(_ folder: String) -> Bool {
        let shared = ["/", "/dev", "/proc", "/sys", "/run", "/tmp", "/var/tmp"]
        return shared.contains { folder == $0 || ($0 != "/" && folder.hasPrefix($0 + "/")) }
    }

    /// The `vendor` folder scripts/setup fills, found as the server finds it: beside the executable or
    /// the current directory, or in one of their ancestors.
    static func vendorFolders(executableFolder: String?, currentFolder: String) -> [String] {
        var found: [String] = []
        for root in [executableFolder, currentFolder].compactMap({ $0 }) {
            var folder = (root as NSString).standardizingPath
            while true {
                let candidate = (folder as NSString).appendingPathComponent("vendor")
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: candidate, isDirectory: &isFolder), isFolder.boolValue {
                    if !found.contains(candidate) { found.append(candidate) }
                    break
                }
                let parent = (folder as NSString).deletingLastPathComponent
                if parent == folder || parent.isEmpty { break }
                folder = parent
            }
        }
        return found
    }

    /// Every string value of a JSON document that is an absolute path, however deep.
    static func absolutePaths(inJSON text: String) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else { return [] }
        var paths: [String] = []
        func visit(_ value: Any) {
            switch value {
            case let string as String where string.hasPrefix("/"): paths.append(string)
            case let array as [Any]: array.forEach(visit)
            case let dictionary as [String: Any]: dictionary.keys.sorted().forEach { visit(dictionary[$0]!) }
            default: break
            }
        }
        visit(object)
        return paths
    }

    /// A folder as it is; a file (or a path that does not exist yet) as its folder.
    static func folderHolding(_ path: String) -> String {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue { return path }
        return (path as NSString).deletingLastPathComponent
    }
}
