import Foundation
import Testing
@testable import SpeakerSyncServer

/// The admin key file is secret from its first byte: while keys are written over and over, a watcher
/// polling the folder never sees a file in it that anyone but the owner could read.
@Suite struct AdminKeyFileTests {
    @Test func noFileInTheFolderIsEverReadableByOthers() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("admin-key-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("server.admin-key").path
        try AdminKeyFile.write("first", to: path)
        let exposed = ExposureWatch(folder: folder.path)
        exposed.start()
        for round in 0..<300 { try AdminKeyFile.write("key-\(round)-\(UUID().uuidString)", to: path) }
        let sightings = exposed.stop()
        #expect(sightings.polls > 0)
        #expect(sightings.exposed.isEmpty, "\(sightings.exposed.prefix(3))")
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("key-299-"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["server.admin-key"])
    }
}

/// Polls a folder on a thread of its own, noting every file with group or other permission bits.
private final class ExposureWatch: @unchecked Sendable { // `stopped`, `polls` and `exposed` are guarded by `lock`
    let folder: String
    private let lock = NSLock()
    private var stopped = false
    private var polls = 0
    private var exposed: [String] = []

    init(folder: String) { self.folder = folder }

    func start() {
        Thread.detachNewThread { [self] in
            while true {
                var found: [String] = []
                for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                    var info = stat()
                    if stat(folder + "/" + name, &info) == 0, info.st_mode & 0o077 != 0 { found.append("\(name) \(String(info.st_mode & 0o777, radix: 8))") }
                }
                lock.lock()
                polls += 1
                exposed += found
                let done = stopped
                lock.unlock()
                if done { return }
            }
        }
    }

    func stop() -> (polls: Int, exposed: [String]) {
        lock.lock()
        stopped = true
        let result = (polls, exposed)
        lock.unlock()
        return result
    }
}
