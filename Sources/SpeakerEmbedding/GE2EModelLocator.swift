import Foundation

/// Finds ge2e.bin on this machine; never asks the network (scripts/setup produces the file).
public enum GE2EModelLocator {
    public static let fileName = "ge2e.bin"
    /// A folder holding ge2e.bin. When set, it is the only place looked at, so a deployment that
    /// names its models folder never silently picks up a development copy.
    public static let environmentVariable = "SPEAKERSYNC_MODELS"

    /// The model file, or `modelNotFound` naming every place searched.
    public static func locate(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        executableDirectory: URL? = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent(),
        currentDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    ) throws -> URL {
        if let folder = environment[environmentVariable], !folder.isEmpty {
            let candidate = URL(fileURLWithPath: folder).appendingPathComponent(fileName)
            guard FileManager.default.fileExists(atPath: candidate.path) else {
                throw SpeakerEmbeddingError(
                    .modelNotFound, "\(environmentVariable)=\(folder) holds no \(fileName) (run scripts/setup)")
            }
            return candidate
        }
        var searched: [String] = []
        for start in [executableDirectory, currentDirectory].compactMap({ $0 }) {
            var folder = start.standardizedFileURL
            while true {
                let candidate = folder.appendingPathComponent("vendor/models").appendingPathComponent(fileName)
                if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
                searched.append(candidate.path)
                let parent = folder.deletingLastPathComponent()
                if parent.path == folder.path { break }
                folder = parent
            }
        }
        throw SpeakerEmbeddingError(
            .modelNotFound,
            "no \(fileName): \(environmentVariable) is unset and none of \(searched.joined(separator: ", ")) exists (run scripts/setup)")
    }
}
