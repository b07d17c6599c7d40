import Foundation
import SpeakerSyncClient
import Synchronization

/// `stream --live`: the transcript as the server revises it, on standard error (standard output keeps
/// the final transcript or JSON). On a terminal the transcript is redrawn in place, as much of its end
/// as fits the window; otherwise (a log, a pipe) each utterance that changed is printed as a line,
/// `u3 1.2-2.0 s Speaker 1: hello there`, so a later line with the same id replaces an earlier one.
final class LiveTranscriptView: Sendable {
    private struct State {
        var transcript = LiveTranscript()
        /// What each utterance looked like when last printed (line mode).
        var printed: [String: String] = [:]
        /// Terminal rows the last redraw used, to move back over them.
        var drawnRows = 0
        var lastDraw: ContinuousClock.Instant?
        var pending = false
    }

    private let state = Mutex(State())
    private let isTerminal: Bool
    /// Redraws at most this often; updates in between are drawn by the next one (or by `finish`).
    private static let redrawInterval = Duration.milliseconds(100)

    init(isTerminal: Bool = isatty(STDERR_FILENO) == 1) {
        self.isTerminal = isTerminal
    }

    /// One server message (JSON text), as `DeviceStreamConfig.onMessage` passes them.
    func received(_ text: String) {
        // Only transcripts and speaker names change what is shown; stats can be large, skip decoding them.
        guard !text.hasPrefix(#"{"type":"stats""#), let message = try? ServerMessageDecoder().decode(text) else { return }
        switch message {
        case .transcript, .speakers: break
        default: return
        }
        state.withLock { state in
            state.transcript.apply(message)
            if isTerminal {
                state.pending = true
                if let last = state.lastDraw, ContinuousClock.now - last < Self.redrawInterval { return }
                redraw(&state)
            } else {
                printChangedLines(&state)
            }
        }
    }

    /// A line that is not the transcript (a reconnect, an error): printed above the live transcript.
    func note(_ line: String) {
        state.withLock { state in
            guard isTerminal else { return write(line + "\n") }
            write(Self.erase(rows: state.drawnRows) + line + "\n")
            state.drawnRows = 0
            redraw(&state)
        }
    }

    /// The stream is over: draws what is still pending. `clear` (on a terminal) takes the live
    /// transcript off the screen, for when the final one is about to be printed on the same terminal.
    func finish(clear: Bool) {
        state.withLock { state in
            guard isTerminal else { return printChangedLines(&state) }
            if clear {
                write(Self.erase(rows: state.drawnRows))
                state.drawnRows = 0
            } else if state.pending {
                redraw(&state)
            }
        }
    }

    // MARK: Drawing (under the lock)

    private func printChangedLines(_ state: inout State) {
        var lines: [String] = []
        let utterances = state.transcript.utterances
        for utterance in utterances {
            let span = String(format: "%.1f-%.1f s", utterance.startSeconds, utterance.endSeconds)
            let line = "\(utterance.id) \(span) \(utterance.name): \(utterance.text)"
            if state.printed[utterance.id] != line {
                state.printed[utterance.id] = line
                lines.append(line)
            }
        }
        let present = Set(utterances.map(\.id))
        for id in state.printed.keys.sorted() where !present.contains(id) {
            state.printed[id] = nil
            lines.append("\(id) removed")
        }
        if !lines.isEmpty { write(lines.joined(separator: "\n") + "\n") }
    }

    private func redraw(_ state: inout State) {
        let size = Self.windowSize()
        // As many of the last utterances as fit, one row short of the window so nothing scrolls away.
        var rows: [String] = []
        var rowCount = 0
        for utterance in state.transcript.utterances.reversed() {
            let line = "\(utterance.name): \(utterance.text)"
            let needed = max(1, (line.count + size.columns - 1) / size.columns)
            if rowCount + needed > size.rows - 1 { break }
            rows.insert(line, at: 0)
            rowCount += needed
        }
        write(Self.erase(rows: state.drawnRows) + rows.map { $0 + "\n" }.joined())
        state.drawnRows = rowCount
        state.lastDraw = ContinuousClock.now
        state.pending = false
    }

    /// Moves up over `rows` rows drawn before and clears from there to the end of the screen.
    private static func erase(rows: Int) -> String {
        rows == 0 ? "\r\u{1B}[J" : "\r\u{1B}[\(rows)A\u{1B}[J"
    }

    private static func windowSize() -> (rows: Int, columns: Int) {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 1, size.ws_col > 0 else { return (24, 80) }
        return (Int(size.ws_row), Int(size.ws_col))
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
