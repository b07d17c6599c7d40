import Foundation

/// Resident memory of the server and its provider workers, reported by `/healthz` so that
/// `speakersync eval` (and operators) can see what sessions cost without access to the server's machine.
enum ProcessMemory {
    /// Resident set size in bytes from /proc/<pid>/statm (this process by default); nil where /proc is
    /// not available or the process is gone.
    static func residentBytes(processID: Int32? = nil) -> Int? {
        let path = processID.map { "/proc/\($0)/statm" } ?? "/proc/self/statm"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
