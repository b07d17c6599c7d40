import Foundation

/// What makes one process the owner of a data folder's cluster: an exclusive `flock` on
/// `<data folder>.lock`, held on an open descriptor for as long as the owner runs its server.
///
/// The file sits beside the folder, not in it, so it exists before initdb and is never among the
/// files PostgreSQL owns. The kernel releases the lock when the descriptor closes, however the
/// owner ends (SIGKILL included), so a dead owner never blocks the next one; an owner that stops
/// unlocks before it closes (`release` says why). The descriptor is close-on-exec and children are
/// spawned with every descriptor above stderr closed: no child (the server itself among them) can
/// keep the lock alive after the owner. The owner writes its pid into the file, for the messages of
/// processes that cannot take the lock.
///
/// flock locks an open file description, so two objects in one process on the same folder exclude
/// each other as two processes do.
final class ClusterLock {
    enum Attempt {
        case acquired(ClusterLock)
        case held(ownerPID: pid_t?)
    }

    let path: String
    /// The open descriptor holding the lock, -1 once released (readable for tests, which copy it as a
    /// child being spawned does).
    private(set) var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    static func path(forDataDirectory dataDirectory: URL) -> String { dataDirectory.path + ".lock" }

    /// Takes the lock without waiting, or says who holds it. Creates the file (0600) and its parent
    /// folder when missing.
    static func tryAcquire(path: String) throws -> Attempt {
        let parent = (path as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: parent) {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw PGError(code: .clusterFailed, message: "cannot open the cluster's lock file \(path): \(String(cString: strerror(errno)))")
        }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            if error == EINTR { continue }
            defer { close(descriptor) }
            guard error == EWOULDBLOCK else {
                throw PGError(code: .clusterFailed, message: "cannot lock \(path): \(String(cString: strerror(error)))")
            }
            return .held(ownerPID: readPID(descriptor))
        }
        let lock = ClusterLock(path: path, descriptor: descriptor)
        fchmod(descriptor, 0o600)
        let text = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = text.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        return .acquired(lock)
    }

    /// Releases the lock, then closes the descriptor. Safe to call more than once.
    ///
    /// Why unlock first: the lock belongs to the open file description, and closing this descriptor
    /// frees it only once every copy is closed. A child another thread is spawning has a copy of every
    /// descriptor until its exec closes them (close-on-exec, and closefrom while it still runs in the
    /// parent's image). An owner that stopped and a new owner that started at that moment were refused
    /// as `cluster_in_use` naming their own pid: seen once in CI, with tests spawning processes beside
    /// `EmbeddedPostgresClusterTests`. `LOCK_UN` frees the lock for every copy at once.
    func release() {
        guard descriptor >= 0 else { return }
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    private static func readPID(_ descriptor: Int32) -> pid_t? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return pid_t(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
