import ChildProcesses
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

    /// espeak-ng → WAV on stdout (22050 Hz s16) → 16 kHz → trimmed. The output is read as it comes
    /// (`Subprocess.run`): a word's WAV is larger than a pipe buffer.
    func renderOne(_ key: Key) throws -> [Float] {
        var configuration = Subprocess.Configuration(
            executable: executable.path,
            arguments: ["-v", key.voice.voice, "-p", String(key.voice.pitch), "-s", String(key.voice.speed), "--stdout", key.word])
        configuration.standardOutput = .pipe
        // Subprocess, not Foundation's Process: its pipe cannot leak into a server another thread
        // starts meanwhile, which would hold the end of this word's WAV back as long as it runs.
        let done: Subprocess.Completed
        do {
            done = try Subprocess.run(configuration)
        } catch {
            throw SynthError(.espeakNotFound, "cannot run \(executable.path): \(error)")
        }
        let data = done.standardOutput
        guard done.exit.succeeded else {
            throw SynthError(.espeakFailed, "espeak-ng ended with \(done.exit) for '\(key.word)' (\(key.voice.voice)): \(done.standardErrorText.prefix(300))")
        }
        return try WordTrimmer.word(fromWAV: data, word: key.word, voice: key.voice.voice, engine: "espeak-ng",
                                    config: config, failure: .espeakFailed)
    }
}
