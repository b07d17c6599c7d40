import Foundation
import SpeakerSyncAudio
import TestSupport
import Testing
@testable import SpeechRecognition

@Suite struct PocketSphinxRecognizerTests {
    /// Words may reach this far outside a sentence's audible span: PocketSphinx places word boundaries
    /// on 10 ms frames, and a word's first or last frames can take a little of the silence around it
    /// (measured at most 0.04 s on these sentences).
    static let spanToleranceSeconds = 0.1

    /// Synthesised sentences with silences between them: most words recognised, each inside its own
    /// sentence's span, which checks that every utterance's word times land on the recording's timeline.
    /// Bounds from measured aggregate word error rates on these sentences: 0.14 with the default whole
    /// utterances (bound 0.30), 0.35 when fed in 0.1 s blocks and cut every 4 s, mid-sentence, which
    /// splits words (bound 0.50). The margin allows for other espeak-ng and PocketSphinx builds.
    @Test(arguments: [
        (RecognizerConfig(), 0.30),
        (RecognizerConfig(maxUtteranceSeconds: 4, blockSeconds: 0.1), 0.50),
    ])
    func recognisesSynthesisedSpeechInsideItsSpans(config: RecognizerConfig, maxWordErrorRate: Double) throws {
        let recording = try Fixtures.recording(Fixtures.sentences, gapSeconds: 1.5)
        #expect(recording.audio.sampleRate == 22_050)
        let recognizer = try PocketSphinxRecognizer(config: config, logger: Fixtures.logger)
        let words = try recognizer.recognize(recording.audio)

        let wer = Fixtures.wordErrorRate(reference: recording.referenceWords, hypothesis: words.map(\.text))
        print("synthesised speech (max utterance \(config.maxUtteranceSeconds) s, blocks \(config.blockSeconds.map { "\($0) s" } ?? "none")): "
              + "WER \(String(format: "%.3f", wer)), \(words.count) words for \(recording.referenceWords.count)")
        #expect(wer <= maxWordErrorRate, "heard: \(words.map(\.text).joined(separator: " "))")

        // How far each word reaches outside the nearest sentence span (0 when inside).
        let excursions = words.map { word in
            recording.spans.map { max(0, $0.lowerBound - word.startSeconds, word.endSeconds - $0.upperBound) }.min()!
        }
        print("  largest excursion outside a sentence: \(String(format: "%.3f", excursions.max() ?? 0)) s")
        for word in words {
            #expect(word.startSeconds < word.endSeconds)
            #expect((0 ... 1).contains(word.confidence))
            let inside = recording.spans.contains { span in
                word.startSeconds >= span.lowerBound - Self.spanToleranceSeconds
                    && word.endSeconds <= span.upperBound + Self.spanToleranceSeconds
            }
            #expect(inside, "\(word.text) at \(word.startSeconds)–\(word.endSeconds) s is outside every sentence \(recording.spans)")
        }
        // Every sentence yields words, so none was lost at an utterance boundary.
        for span in recording.spans {
            #expect(words.contains { span.contains(($0.startSeconds + $0.endSeconds) / 2) })
        }
    }

    /// The shared two-speaker recording: sane times on the recording's timeline, mostly inside the
    /// reference speech. sample.rttm turns cover 75 % of the recording (nobody speaks in the first
    /// 6.7 s), so shifted or scattered times would put about that share inside; measured: all word
    /// midpoints inside. 90 % is required, leaving room for a word on a breath or a noise.
    @Test func wordsOnTheSampleRecordingFallInsideReferenceSpeech() throws {
        let wav = try #require(TestData.file("sample/sample.wav"), "set SPEAKERSYNC_TEST_DATA")
        let rttm = try #require(TestData.file("sample/sample.rttm"))
        let audio = try WAVFile.read(contentsOf: wav)
        let speech = try Fixtures.rttmSpeech(rttm)
        let words = try PocketSphinxRecognizer(logger: Fixtures.logger).recognize(audio)

        #expect(words.count >= 20)
        for (a, b) in zip(words, words.dropFirst()) {
            #expect(a.startSeconds <= b.startSeconds && a.endSeconds <= b.startSeconds + 1e-9)
        }
        for word in words {
            #expect(word.startSeconds >= 0 && word.startSeconds < word.endSeconds && word.endSeconds <= audio.durationSeconds)
            #expect(!word.text.isEmpty && !word.text.contains("(") && !word.text.hasPrefix("<") && !word.text.hasPrefix("["))
        }
        let inside = words.filter { word in speech.contains { $0.contains((word.startSeconds + word.endSeconds) / 2) } }
        let fraction = Double(inside.count) / Double(words.count)
        print("sample.wav: \(words.count) words, \(String(format: "%.1f", fraction * 100)) % of midpoints inside reference speech")
        #expect(fraction >= 0.9)
    }

    @Test func pronunciationVariantsAndNonSpeechEntriesAreCleanedUp() {
        #expect(PocketSphinxRecognizer.spokenWord("read(2)") == "read")
        #expect(PocketSphinxRecognizer.spokenWord("hello") == "hello")
        #expect(PocketSphinxRecognizer.spokenWord("don't") == "don't")
        for entry in ["<s>", "</s>", "<sil>", "[NOISE]", "[SPEECH]", "++UH++", ""] {
            #expect(PocketSphinxRecognizer.spokenWord(entry) == nil)
        }
    }
}
