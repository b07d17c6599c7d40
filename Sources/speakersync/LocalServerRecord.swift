import Foundation
import SpeakerSyncServer

/// How a `serve` on this machine can be reached, written beside the default data folder while it runs
/// (`<default data dir>.server.json`), so the client commands find it with no flags: the port it chose
/// (`--port 0` included) and the admin key file it wrote, wherever `--data-dir` put them. Without it,
/// `token create` after `serve --port 9000 --data-dir X` needed both repeated.
///
/// Only a path and a URL are in it, never a credential. A record whose process is gone is ignored, so
/// a server that was killed leaves nothing that misleads.
struct LocalServerRecord: Codable, Equatable {
    var url: String
    var pid: Int32
    var adminKeyFile: String
    var dataDirectory: String

    enum CodingKeys: String, CodingKey {
        case url, pid
        case adminKeyFile = "admin_key_file"
        case dataDirectory = "data_directory"
    }

    static var path: String {
        var folder = ResourceLocator.defaultDataDirectory()
        while folder.count > 1, folder.hasSuffix("/") { folder.removeLast() }
        return folder + ".server.json"
    }

    /// The running server's record, if one is there and its process lives.
    static func current(at path: String = LocalServerRecord.path) -> LocalServerRecord? {
        guard let data = FileManager.default.contents(atPath: path),
              let record = try? JSONDecoder().decode(LocalServerRecord.self, from: data),
              record.pid > 0, kill(record.pid, 0) == 0 || errno == EPERM else { return nil }
        return record
    }

    /// Written by `serve` once it listens (owner-only; replaced atomically).
    func write(to path: String = LocalServerRecord.path) {
        guard let data = try? JSONEncoder().encode(self) else { return }
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path + ".tmp", contents: data, attributes: [.posixPermissions: 0o600]) else { return }
        _ = rename(path + ".tmp", path)
    }

    /// Removed by `serve` as it stops, unless another server has written its own since.
    func remove(at path: String = LocalServerRecord.path) {
        guard Self.read(at: path)?.pid == pid else { return }
        try? FileManager.default.removeItem(atPath: path)
    }

    private static func read(at path: String) -> LocalServerRecord? {
        FileManager.default.contents(atPath: path).flatMap { try? JSONDecoder().decode(LocalServerRecord.self, from: $0) }
    }
}
