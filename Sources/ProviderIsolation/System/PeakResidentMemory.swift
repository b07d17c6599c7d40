import Foundation

/// A process's peak resident memory (`VmHWM` in `/proc/<pid>/status`, kilobytes), and what a
/// worker's own peak was when it ended.
///
/// Why not just `wait4`'s `ru_maxrss`: a worker is started with `posix_spawn`, which on Linux runs the
/// child in the server's address space until it execs, and exec folds that address space's high-water
/// mark into the child's `maxrss`. So a worker spawned by a server that once used 1.2 GB reports a
/// 1.2 GB peak however little it used itself, and a crash would be blamed on the memory limit.
enum PeakResidentMemory {
    /// `VmHWM` of `pid` (nil: this process); nil when unreadable (the process is gone).
    static func kilobytes(of pid: pid_t? = nil) -> Int? {
        let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            // "VmHWM:\t  123456 kB"
            return Int(line.dropFirst("VmHWM:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
        }
        return nil
    }

    /// The worker's own peak: `ru_maxrss` only when it exceeds the spawner's peak read after the
    /// spawn (it is then the worker's own), else the peak sampled while it ran; 0 when neither says.
    static func workerPeakKilobytes(reported: Int, spawnerAfterSpawn: Int, sampled: Int) -> Int {
        max(reported > spawnerAfterSpawn ? reported : 0, sampled)
    }
}
