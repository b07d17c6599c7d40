import Foundation
import Synchronization

/// Progress of long CLI work (eval over many files, words, synth): plain lines on standard error, one
/// per finished item, e.g. `eval: 3/11 ES2011a_0 (12.4 s audio, 41 s elapsed) DER 12.3 %`. Plain
/// lines rather than a redrawn bar, so CI logs keep them; standard error, so standard output carries
/// only the result (a report, JSON). `--quiet` silences them.
final class ProgressReporter: Sendable {
    let command: String
    let total: Int
    let quiet: Bool
    private let finishedCount = Mutex(0)
    private let started = ContinuousClock.now

    init(command: String, total: Int, quiet: Bool) {
        self.command = command
        self.total = total
        self.quiet = quiet
    }

    /// A line about the run as a whole ("model loaded in 0.4 s", totals).
    func note(_ text: String) {
        write("\(command): \(text)")
    }

    /// One item is done: `eval: 3/11 <item> (<detail>, 41 s elapsed) <result>`.
    func finished(_ item: String, detail: String, result: String = "") {
        let index = finishedCount.withLock { count -> Int in
            count += 1
            return count
        }
        let elapsed = (ContinuousClock.now - started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
        write("\(command): \(index)/\(total) \(item) (\(detail), \(String(format: "%.0f", seconds)) s elapsed)" + (result.isEmpty ? "" : " \(result)"))
    }

    private func write(_ line: String) {
        guard !quiet else { return }
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
