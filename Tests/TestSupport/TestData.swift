import Foundation

/// Where the shared recordings live: SPEAKERSYNC_TEST_DATA, else the `shared/data` folder found by
/// walking up from this source file (the repository sits beside `shared/` in development and CI).
public enum TestData {
    public static var directory: URL? {
        if let path = ProcessInfo.processInfo.environment["SPEAKERSYNC_TEST_DATA"], !path.isEmpty,
           FileManager.default.fileExists(atPath: path) {
            return URL(fileURLWithPath: path)
        }
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = folder.appendingPathComponent("shared/data")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
    }

    public static func file(_ relativePath: String) -> URL? {
        guard let url = directory?.appendingPathComponent(relativePath),
              FileManager.default.fileExists(atPath: url.path) else { return nil }
        return url
    }
}
