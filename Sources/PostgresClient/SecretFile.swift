import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes files that hold secrets so that no other user can read them at any moment: created 0600
/// from the first byte under a temporary name (`open(O_CREAT|O_EXCL|O_NOFOLLOW, 0600)`, so neither
/// an existing file nor a planted symlink is reused), written, fsync'd, then renamed over the final
/// name and the folder fsync'd. Never written with wider permissions and chmod'ed afterwards,
/// which leaves a window in which the secret is readable.
enum SecretFile {
    /// Replaces `path` with `contents` (mode 0600, owned by this process's user, or by `owner` when
    /// given: handed over before the rename, so the name never points at a file the owner cannot
    /// read, and nothing at `path` (a symlink the owner planted) is followed).
    static func write(_ contents: String, to path: String, owner: (uid: uid_t, gid: gid_t)? = nil) throws {
        let folder = (path as NSString).deletingLastPathComponent
        let temporary = "\(path).tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)") }
        var written = false
        defer {
            if !written { unlink(temporary) }
        }
        do {
            defer { close(descriptor) }
            // The creation mode is masked by the umask; 0600 masked can only be stricter. fchmod
            // pins it anyway (on the descriptor: nothing was written yet).
            guard fchmod(descriptor, 0o600) == 0 else { throw failure("cannot set the mode of \(temporary)") }
            if let owner, fchown(descriptor, owner.uid, owner.gid) != 0 { throw failure("cannot hand \(temporary) over") }
            try writeAll(Array(contents.utf8), to: descriptor, path: temporary)
            guard fsync(descriptor) == 0 else { throw failure("cannot fsync \(temporary)") }
        }
        guard rename(temporary, path) == 0 else { throw failure("cannot rename \(temporary) to \(path)") }
        written = true
        let folderDescriptor = open(folder.isEmpty ? "." : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folderDescriptor >= 0 {
            _ = fsync(folderDescriptor)
            close(folderDescriptor)
        }
    }

    /// The text of the regular file at `path`, nil when there is none; a symlink is not followed
    /// (this process may be root reading a folder another account controls).
    static func readRegular(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, let data = try? handle.readToEnd() else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Whether `path` is a regular file this process's user owns that no one else may read or
    /// write (what libpq also demands of a password file); nil when it does not exist.
    static func isPrivate(_ path: String) -> Bool? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (info.st_mode & S_IFMT) == S_IFREG && info.st_uid == geteuid() && info.st_mode & 0o077 == 0
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, bytes.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("cannot write \(path)")
            }
            offset += count
        }
    }

    private static func failure(_ what: String) -> PGError {
        PGError(code: .clusterFailed, message: "\(what): \(String(cString: strerror(errno)))")
    }
}
