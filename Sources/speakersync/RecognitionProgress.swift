import Foundation
import SessionProtocol
import Synchronization

/// What `stream --asr server` shows while it waits: the audio goes out at once (as fast as the server
/// accepts) and the server then recognises it at its own pace, so without this a long recording gave
/// many seconds of nothing (69 s of audio, 19 s of silence). Every few seconds one line on standard
/// error says how far the words the server sent back reach into the recording.
final class RecognitionProgress: Sendable {
    private struct State {
        /// Words per utterance id, and the end of each utterance's last word (upserts replace).
        var utterances: [String: (words: Int, endSeconds: Double)] = [:]
        var lastLine = ""
    }

    private let audioSeconds: Double
    private let write: @Sendable (String) -> Void
    private let state = Mutex(State())
    private let ticker = Mutex<Task<Void, Never>?>(nil)

    init(audioSeconds: Double, write: @escaping @Sendable (String) -> Void) {
        self.audioSeconds = audioSeconds
        self.write = write
    }

    /// Each message the server sent (`DeviceStreamConfig.onMessage`).
    func received(_ text: String) {
        guard case .transcript(let update)? = try? ServerMessageDecoder().decode(text) else { return }
        state.withLock { state in
            for id in update.removed { state.utterances[id] = nil }
            for utterance in update.upserted {
                state.utterances[utterance.id] = (utterance.words.count, utterance.words.map(\.endSeconds).max() ?? utterance.endSeconds)
            }
        }
    }

    /// The line for now, e.g. `stream: words recognised up to 23.4 s of 69.0 s (41 words)`.
    func line() -> String {
        state.withLock { state in
            let words = state.utterances.values.reduce(0) { $0 + $1.words }
            let reach = state.utterances.values.map(\.endSeconds).max() ?? 0
            return String(format: "stream: words recognised up to %.1f s of %.1f s (%d words)", reach, audioSeconds, words)
        }
    }

    /// Writes `line()` every `intervalSeconds` while it changes, until `stop`.
    func start(intervalSeconds: Double = 3) {
        let task = Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(intervalSeconds))
                if Task.isCancelled { break }
                let current = line()
                let changed = state.withLock { state in
                    defer { state.lastLine = current }
                    return state.lastLine != current
                }
                if changed { write(current) }
            }
        }
        ticker.withLock { $0 = task }
    }

    func stop() {
        ticker.withLock { $0?.cancel(); $0 = nil }
    }
}
