import Foundation

/// A child's log file, opened for it to append to.
public enum LogFile {
    /// Opens `url` for appending (created, mode 0644, when missing), close-on-exec: give its descriptor
    /// to `Subprocess` and close the handle once the child is started. O_APPEND: writers that share it
    /// (a server restarted onto the same log, this process and its child) never overwrite each other.
    public static func openForAppending(_ url: URL) throws(SubprocessError) -> FileHandle {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw SubprocessError(.ioFailed, call: "open \(url.path)", errno: errno)
        }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }
}

extension Subprocess {
    /// Starts `configuration` with its standard output and error appended to `log` (created when missing).
    public convenience init(_ configuration: Configuration, appendingOutputTo log: URL) throws(SubprocessError) {
        let handle = try LogFile.openForAppending(log)
        defer { try? handle.close() }
        var configuration = configuration
        configuration.standardOutput = .descriptor(handle.fileDescriptor)
        configuration.standardError = .standardOutput
        try self.init(configuration)
    }
}
