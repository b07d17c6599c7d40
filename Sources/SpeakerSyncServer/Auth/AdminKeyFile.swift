import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The operator's copy of a generated admin key: one line, mode 0600, in a folder created 0700 when
/// missing. The server writes it at first start; the CLI rewrites it after `token rotate-admin-key`.
///
/// The file is secret from its first byte: it is created with `open(O_CREAT|O_EXCL, 0600)` under a
/// temporary name (so no other user can ever open it, not even for an instant before a chmod, which
/// is what Foundation's atomic write did: a 0644 temporary file, renamed, then chmod'ed), written,
/// fsync'd, and renamed over the old one (a reader never sees half a key; a failed write leaves the
/// previous key in place), then the folder is fsync'd so the rename survives a crash.
public enum AdminKeyFile {
    public struct WriteError: Error, CustomStringConvertible {
        public var path: String
        public var step: String
        public var errorNumber: Int32
        public var description: String { "cannot write \(path): \(step) failed: \(String(cString: strerror(errorNumber)))" }
    }

    public static func write(_ key: String, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = path + ".new-\(getpid())"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw WriteError(path: path, step: "open", errorNumber: errno) }
        var failure: WriteError?
        let bytes = Array((key + "\n").utf8)
        var written = 0
        while written < bytes.count, failure == nil {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n > 0 { written += n } else if errno != EINTR { failure = WriteError(path: path, step: "write", errorNumber: errno) }
        }
        if failure == nil, fsync(fd) != 0 { failure = WriteError(path: path, step: "fsync", errorNumber: errno) }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = WriteError(path: path, step: "rename", errorNumber: errno) }
        if let failure {
            unlink(temporary)
            throw failure
        }
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }
}
