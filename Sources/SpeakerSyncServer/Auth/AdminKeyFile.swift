import Foundation

/// The operator's copy of a generated admin key: one line, mode 0600, in a folder created 0700 when
/// missing. Written to a temporary file and renamed over the old one, so a reader never sees half a key
/// and a failed write leaves the previous key in place. The server writes it at first start; the CLI
/// rewrites it after `token rotate-admin-key`.
public enum AdminKeyFile {
    public static func write(_ key: String, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let temporary = path + ".new"
        try? FileManager.default.removeItem(atPath: temporary)
        guard FileManager.default.createFile(atPath: temporary, contents: Data((key + "\n").utf8), attributes: [.posixPermissions: 0o600]),
              rename(temporary, path) == 0 else {
            try? FileManager.default.removeItem(atPath: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }
}
