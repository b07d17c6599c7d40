import Foundation
import SpeakerSyncAudio
import Synchronization

/// Renders single words with espeak-ng, one process per (voice, word), several at once.
///
/// Per-word calls are what make the truth exact: each word's audio is known in isolation, so its
/// start and end on the meeting timeline are wherever the synthesizer places it.
struct EspeakRenderer: Sendable {
    typealias Key = WordKey

    let executable: URL
    let config: SynthConfig
    let outputRate = 16_000

    init(config: SynthConfig) throws {
        self.config = config
        executable = try ExecutableLocator.resolve(config.espeakExecutable, notFound: .espeakNotFound, package: "espeak-ng")
    }

    /// Renders every key once, in parallel; the result is keyed so order of completion cannot matter.
    func render(_ keys: [Key]) throws -> [Key: [Float]] {
        let state = Mutex<(next: Int, results: [Key: [Float]], error: SynthError?)>((0, [:], nil))
        let workers = max(1, min(config.maxConcurrentProcesses, keys.count))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let index: Int? = state.withLock { s in
                    guard s.error == nil, s.next < keys.count else { return nil }
                    defer { s.next += 1 }
                    return s.next
                }
                guard let index else { return }
                do {
                    let samples = try renderOne(keys[index])
                    state.withLock { $0.results[keys[index]] = samples }
                } catch {
                    let synthError = error as? SynthError ?? SynthError(.espeakFailed, "\(error)")
                    state.withLock { if $0.error == nil { $0.error = synthError } }
                }
            }
        }
        return try state.withLock { s in
            if let error = s.error { throw error }
            return s.results
        }
    }

    /// espeak-ng → WAV on stdout (22050 Hz s16) → 16 kHz → trimmed.
    func renderOne(_ key: Key) throws -> [Float] {
        let process = Process()
        process.executableURL = executable
        process.arguments = ["-v", key.voice.voice, "-p", String(key.voice.pitch), "-s", String(key.voice.speed),
                             "--stdout", key.word]
        let stdout = Pipe()
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw SynthError(.espeakNotFound, "cannot run \(executable.path): \(error.localizedDescription)")
        }
        // Read before waiting: a word's WAV is larger than a pipe buffer.
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw SynthError(.espeakFailed,
                             "espeak-ng exited \(process.terminationStatus) for '\(key.word)' (\(key.voice.voice))")
        }
        return try WordTrimmer.word(fromWAV: data, word: key.word, voice: key.voice.voice, engine: "espeak-ng",
                                    config: config, failure: .espeakFailed)
    }
}
