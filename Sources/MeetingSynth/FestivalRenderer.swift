import ChildProcesses
import Foundation
import SpeakerSyncAudio
import Synchronization

/// Renders single words with Festival: one `festival -b` process per voice speaks all of that voice's
/// words into separate WAV files (start-up costs ~0.3 s, a word a few milliseconds), so each word's
/// audio is known in isolation, as with espeak-ng, and its truth times are exact.
struct FestivalRenderer: Sendable {
    let executable: URL
    let config: SynthConfig

    init(config: SynthConfig) throws {
        self.config = config
        executable = try ExecutableLocator.resolve(config.festivalExecutable, notFound: .festivalNotFound, package: "festival")
    }

    func render(_ keys: [WordKey]) throws -> [WordKey: [Float]] {
        let byVoice = Dictionary(grouping: keys, by: \.voice)
        let voices = Array(byVoice.keys).sorted { $0.voice < $1.voice }
        let state = Mutex<(results: [WordKey: [Float]], error: SynthError?)>(([:], nil))
        DispatchQueue.concurrentPerform(iterations: voices.count) { index in
            do {
                let words = try renderVoice(voices[index], words: byVoice[voices[index]]!.map(\.word))
                state.withLock { s in
                    for (word, samples) in words { s.results[WordKey(voice: voices[index], word: word)] = samples }
                }
            } catch {
                let synthError = error as? SynthError ?? SynthError(.festivalFailed, "\(error)")
                state.withLock { if $0.error == nil { $0.error = synthError } }
            }
        }
        return try state.withLock { s in
            if let error = s.error { throw error }
            return s.results
        }
    }

    private func renderVoice(_ voice: VoiceSpec, words: [String]) throws -> [String: [Float]] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-festival-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Words were checked by `MeetingSynthesizer.isSpeakable` (letters, digits, apostrophes), so
        // they can be quoted in Scheme as they are.
        var script = "(voice_\(voice.voice))\n"
        script += "(Parameter.set 'Duration_Stretch \(String(format: "%.3f", 170.0 / Double(max(60, voice.speed)))))\n"
        for (index, word) in words.enumerated() {
            let path = directory.appendingPathComponent("\(index).wav").path
            script += "(utt.save.wave (utt.synth (Utterance Text \"\(word)\")) \"\(path)\" 'riff)\n"
        }
        let scriptURL = directory.appendingPathComponent("words.scm")
        try Data(script.utf8).write(to: scriptURL)

        var configuration = Subprocess.Configuration(executable: executable.path, arguments: ["-b", scriptURL.path])
        configuration.standardError = .pipe
        let done: Subprocess.Completed
        do {
            done = try Subprocess.run(configuration)
        } catch {
            throw SynthError(.festivalNotFound, "cannot run \(executable.path): \(error)")
        }
        let messages = done.standardErrorText
        guard done.exit.succeeded else {
            throw SynthError(.festivalFailed, "festival ended with \(done.exit) for voice \(voice.voice): \(messages.prefix(300))")
        }
        var result: [String: [Float]] = [:]
        for (index, word) in words.enumerated() {
            let url = directory.appendingPathComponent("\(index).wav")
            guard let data = try? Data(contentsOf: url) else {
                throw SynthError(.festivalFailed, "festival wrote no audio for '\(word)' with voice \(voice.voice) (is its festvox package installed?) \(messages.prefix(300))")
            }
            result[word] = try WordTrimmer.word(fromWAV: data, word: word, voice: voice.voice, engine: "festival",
                                                config: config, failure: .festivalFailed)
        }
        return result
    }
}
