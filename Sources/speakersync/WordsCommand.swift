import ArgumentParser
import Foundation
import SpeakerSyncAudio
import SpeakerSyncClient
import SpeechRecognition

/// Produces the words file a phone's on-device ASR would send, from a real recording, so recordings
/// without transcripts (AMI excerpts, field recordings) can be streamed with `speakersync stream`.
struct WordsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "words",
        abstract: "Recognise speech on this machine (PocketSphinx) and write a words file with timestamps, as a phone's ASR would.",
        discussion: "Writes {\"words\":[{\"text\",\"start\",\"end\",\"confidence\"}]}, the format `stream --words` reads. "
            + "Without --output or --output-dir the JSON of a single file goes to stdout. "
            + "Per file, a progress line with the word count, audio seconds, decode seconds and real-time factor goes to stderr "
            + "(words: 2/5 NAME (…)); --quiet leaves them out."
    )

    @Argument(help: "Recordings (WAV, 8–48 kHz; resampled to 16 kHz).")
    var files: [String]

    @Option(help: "Words file to write (one recording only; '-' for stdout).")
    var output: String?

    @Option(name: .customLong("output-dir"), help: "Folder for <name>.words.json per recording.")
    var outputDir: String?

    @Option(help: "PocketSphinx model folder (default: $\(RecognizerConfig.modelDirectoryVariable) or \(RecognizerConfig.debianModelDirectory)).")
    var model: String?

    @Option(name: .customLong("block-seconds"), help: "Feed each utterance in blocks of this length, as a phone streams (default: whole utterances).")
    var blockSeconds: Double?

    @Option(name: .customLong("max-utterance-seconds"), help: "Longest stretch decoded as one utterance (default 30).")
    var maxUtteranceSeconds: Double?

    @Option(name: .customLong("log-level"), help: ArgumentHelp(LogLevelOption.help, valueName: "level"))
    var logLevel: LogLevelOption = .warning

    @Flag(help: "No progress lines on standard error (one per recording otherwise).")
    var quiet = false

    func validate() throws {
        if output != nil, outputDir != nil { throw ValidationError("give --output or --output-dir, not both") }
        if files.count > 1, outputDir == nil {
            throw ValidationError("several recordings need --output-dir")
        }
    }

    func run() throws {
        var config = RecognizerConfig.default
        if let model { config.modelDirectory = model }
        if let blockSeconds { config.blockSeconds = blockSeconds }
        if let maxUtteranceSeconds { config.maxUtteranceSeconds = maxUtteranceSeconds }
        let logger = makeLogger(level: logLevel, label: "speakersync.words")
        let clock = ContinuousClock()
        let progress = ProgressReporter(command: "words", total: files.count, quiet: quiet)
        let loadStart = clock.now
        let recognizer = try PocketSphinxRecognizer(config: config, logger: logger)
        progress.note(String(format: "model loaded in %.2f s from %@", (clock.now - loadStart).seconds, config.modelDirectory))

        var totals = (words: 0, audioSeconds: 0.0, decodeSeconds: 0.0)
        for file in files {
            let audio = try WAVFile.read(contentsOf: URL(fileURLWithPath: file))
            let start = clock.now
            let words = try recognizer.recognize(audio)
            let decodeSeconds = (clock.now - start).seconds
            let destination = try write(words, for: file)
            progress.finished(file, detail: String(format: "%.2f s audio", audio.durationSeconds),
                              result: String(format: "%d words, %.2f s decode, RTF %.3f -> %@",
                                             words.count, decodeSeconds, decodeSeconds / max(audio.durationSeconds, 1e-9), destination))
            totals.words += words.count
            totals.audioSeconds += audio.durationSeconds
            totals.decodeSeconds += decodeSeconds
        }
        if files.count > 1 {
            progress.note(String(format: "total: %d files, %d words, %.2f s audio, %.2f s decode, RTF %.3f",
                          files.count, totals.words, totals.audioSeconds, totals.decodeSeconds,
                          totals.decodeSeconds / max(totals.audioSeconds, 1e-9)))
        }
    }

    /// Writes the words where the options say; returns where they went, for the report.
    private func write(_ words: [RecognizedWord], for file: String) throws -> String {
        if let outputDir {
            let name = (URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent) + ".words.json"
            let url = URL(fileURLWithPath: outputDir).appendingPathComponent(name)
            try RecognizedWordsFile.write(words, to: url)
            return url.path
        }
        if let output, output != "-" {
            try RecognizedWordsFile.write(words, to: URL(fileURLWithPath: output))
            return output
        }
        FileHandle.standardOutput.write(try RecognizedWordsFile.encode(words) + Data("\n".utf8))
        return "stdout"
    }
}
