#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A provider worker's private temporary folder: made by the server before the spawn (mode 0700, owned
/// by the worker's account), given to the worker as TMPDIR and as the one folder Landlock lets it write,
/// and removed with everything in it once the worker has been reaped. Workers share an account, so a
/// shared /tmp would let one plugin read or replace another's files.
struct WorkerTemporaryFolder: Sendable {
    let path: String

    /// `owner`: the worker's account when the server is root (the folder is then handed to it).
    init(owner: ProviderSandboxSettings.Account, parent: String = NSTemporaryDirectory()) throws(SystemCallError) {
        var template = Array(((parent as NSString).appendingPathComponent("speakersync-worker.XXXXXX")).utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw SystemCallError(call: "mkdtemp", errno: errno) }
        path = String(cString: template)
        if case .switchTo(let uid, let gid) = owner {
            guard chown(path, uid_t(uid), gid_t(gid)) == 0 else {
                let error = errno
                rmdir(path)
                throw SystemCallError(call: "chown(\(path))", errno: error)
            }
        }
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
