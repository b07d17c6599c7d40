import ChildProcesses
import Foundation
import Logging
import SpeakerSyncAudio
@testable import SpeechRecognition

/// Real audio for the recogniser tests: sentences spoken by espeak-ng (a real process, 22.05 kHz, so
/// the resampler runs) and the shared sample recording.
enum Fixtures {
    static let logger = Logger(label: "speakersync.test.words")

    /// Common-word sentences. espeak-ng's Klatt voice `en-us+klatt2` at 150 words per minute is used
    /// because PocketSphinx's model, trained on real speech, recognised its default voice far worse
    /// (measured aggregate word error rate about 0.55 against about 0.27 over six such sentences).
    static let sentences = [
        "the weather is nice today and we will go to the park after lunch with my friends",
        "i would like to go home now because it is getting late",
        "we need to talk about the budget for the next meeting",
        "this is a test of the speech recognition system",
    ]

    /// Speaks `text` with espeak-ng and reads the WAV it writes.
    static func speak(_ text: String, voice: String = "en-us+klatt2", wordsPerMinute: Int = 150) throws -> AudioBuffer {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("speakersync-words-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: url) }
        let done = try Subprocess.run(Subprocess.Configuration(
            executable: "/usr/bin/env", arguments: ["espeak-ng", "-v", voice, "-s", String(wordsPerMinute), "-w", url.path, text]))
        guard done.exit.succeeded else {
            throw RecognizerError(.io, "espeak-ng ended with \(done.exit): \(done.standardErrorText)")
        }
        return try WAVFile.read(contentsOf: url)
    }

    /// A recording of the sentences, each preceded by `gapSeconds` of digital silence and the last
    /// followed by it, with the time span where each sentence has sound.
    struct Recording {
        var audio: AudioBuffer
        var spans: [ClosedRange<Double>]
        var referenceWords: [String]
    }

    static func recording(_ sentences: [String], gapSeconds: Double) throws -> Recording {
        var samples: [Float] = []
        var spans: [ClosedRange<Double>] = []
        var rate = 0
        for sentence in sentences {
            let speech = try speak(sentence)
            rate = speech.sampleRate
            samples += [Float](repeating: 0, count: Int(gapSeconds * Double(rate)))
            let audible = speech.samples.indices.filter { abs(speech.samples[$0]) > 0.01 }
            let offset = Double(samples.count)
            spans.append(((offset + Double(audible.first!)) / Double(rate)) ... ((offset + Double(audible.last! + 1)) / Double(rate)))
            samples += speech.samples
        }
        samples += [Float](repeating: 0, count: Int(gapSeconds * Double(rate)))
        return Recording(audio: AudioBuffer(samples: samples, sampleRate: rate), spans: spans,
                         referenceWords: sentences.flatMap { $0.split(separator: " ").map(String.init) })
    }

    /// Word-level Levenshtein distance over the reference length.
    static func wordErrorRate(reference: [String], hypothesis: [String]) -> Double {
        var previous = Array(0 ... hypothesis.count)
        for (i, ref) in reference.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: hypothesis.count)
            for (j, hyp) in hypothesis.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ref == hyp ? 0 : 1))
            }
            previous = current
        }
        return Double(previous[hypothesis.count]) / Double(max(1, reference.count))
    }

    /// SPEAKER turns of an RTTM file as time ranges.
    static func rttmSpeech(_ url: URL) throws -> [ClosedRange<Double>] {
        try String(contentsOf: url, encoding: .utf8).split(whereSeparator: \.isNewline).compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.first == "SPEAKER", fields.count >= 5, let start = Double(fields[3]), let duration = Double(fields[4])
            else { return nil }
            return start ... start + duration
        }
    }
}
