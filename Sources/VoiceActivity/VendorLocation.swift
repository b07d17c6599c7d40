import Foundation

/// Where the vendored sherpa-onnx library and silero model are, when `VADConfig` is not told.
///
/// Order: the environment (SPEAKERSYNC_SHERPA_LIB: the library folder; SPEAKERSYNC_MODELS: the models
/// folder), then a `vendor/` folder (what scripts/setup fills) found walking up from the running
/// executable's folder, then from the current directory. The executable comes first so that a server
/// started from anywhere finds the vendor/ of the checkout it was built in. When nothing is found the
/// answer is the path scripts/setup would create under the current directory, so the error names it.
public enum VendorLocation {
    public static let libraryEnvironmentVariable = "SPEAKERSYNC_SHERPA_LIB"
    public static let modelsEnvironmentVariable = "SPEAKERSYNC_MODELS"
    public static let libraryFileName = "libsherpa-onnx-c-api.so"
    public static let onnxRuntimeFileName = "libonnxruntime.so"
    public static let sileroModelFileName = "silero_vad.onnx"

    static let vendorLibrarySubpath = "vendor/sherpa-onnx/lib"
    static let vendorModelsSubpath = "vendor/models"

    public static func sherpaLibraryDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        searchRoots: [String] = defaultSearchRoots()
    ) -> String {
        if let folder = environment[libraryEnvironmentVariable], !folder.isEmpty { return folder }
        return locate(vendorLibrarySubpath, containing: libraryFileName, searchRoots: searchRoots)
    }

    public static func sileroModelPath(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        searchRoots: [String] = defaultSearchRoots()
    ) -> String {
        if let folder = environment[modelsEnvironmentVariable], !folder.isEmpty {
            return (folder as NSString).appendingPathComponent(sileroModelFileName)
        }
        let folder = locate(vendorModelsSubpath, containing: sileroModelFileName, searchRoots: searchRoots)
        return (folder as NSString).appendingPathComponent(sileroModelFileName)
    }

    /// A model file scripts/setup puts in vendor/models (the segmentation and embedding models of the
    /// `pyannote` provider, silero's VAD): in SPEAKERSYNC_MODELS when set, else the vendor/ found.
    public static func modelPath(
        _ fileName: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        searchRoots: [String] = defaultSearchRoots()
    ) -> String {
        if let folder = environment[modelsEnvironmentVariable], !folder.isEmpty {
            return (folder as NSString).appendingPathComponent(fileName)
        }
        return (locate(vendorModelsSubpath, containing: fileName, searchRoots: searchRoots) as NSString).appendingPathComponent(fileName)
    }

    /// The executable's folder, then the current directory.
    public static func defaultSearchRoots() -> [String] {
        var roots: [String] = []
        if let executable = Bundle.main.executableURL {
            roots.append(executable.resolvingSymlinksInPath().deletingLastPathComponent().path)
        }
        roots.append(FileManager.default.currentDirectoryPath)
        return roots
    }

    /// The first `<ancestor>/<subpath>` holding `fileName`, over every ancestor of every root in turn.
    public static func locate(_ subpath: String, containing fileName: String, searchRoots: [String] = defaultSearchRoots()) -> String {
        let files = FileManager.default
        for root in searchRoots {
            let absolute = root.hasPrefix("/") ? root : (files.currentDirectoryPath as NSString).appendingPathComponent(root)
            var folder = (absolute as NSString).standardizingPath
            while true {
                let candidate = (folder as NSString).appendingPathComponent(subpath)
                if files.fileExists(atPath: (candidate as NSString).appendingPathComponent(fileName)) {
                    return candidate
                }
                let parent = (folder as NSString).deletingLastPathComponent
                if parent == folder || parent.isEmpty { break }
                folder = parent
            }
        }
        return (files.currentDirectoryPath as NSString).appendingPathComponent(subpath)
    }
}
