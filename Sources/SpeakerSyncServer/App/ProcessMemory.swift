import Foundation

/// The server process's resident memory, reported by `/healthz` so that `speakersync eval` (and
/// operators) can see what sessions cost without access to the server's machine.
enum ProcessMemory {
    /// Resident set size in bytes from /proc/self/statm; nil where /proc is not available.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
