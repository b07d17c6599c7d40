import DeterministicRandom
import Foundation
import MeetingSynth
import SpeakerSyncAudio
import TestSupport
import Testing
@testable import SpeechRecognition

@Suite struct StreamingRecognizerTests {
    static let pool = RecognizerPool(maximum: 1, logger: Fixtures.logger)

    /// Feeds `samples` in chunks of random sizes (1 sample to 0.5 s, from `seed`), then finishes.
    static func stream(_ samples: [Float], sampleRate: Int, seed: UInt64, offsetSeconds: Double = 0,
                       config: StreamingRecognizerConfig = .default) throws -> (utterances: [RecognizedUtterance], beforeFinish: Int) {
        let recognizer = try StreamingRecognizer(pool: pool, sampleRate: sampleRate, offsetSeconds: offsetSeconds, config: config)
        var random = SeededRandom(seed: seed)
        var utterances: [RecognizedUtterance] = []
        var offset = 0
        while offset < samples.count {
            // Mostly device-like frames, sometimes a single sample or a tiny piece, to hit every boundary.
            let size = random.chance(0.2) ? random.integer(1 ... 7) : random.integer(1 ... sampleRate / 2)
            let end = min(samples.count, offset + size)
            utterances += try recognizer.process(Array(samples[offset ..< end]))
            offset = end
        }
        let beforeFinish = utterances.count
        utterances += try recognizer.finish()
        return (utterances, beforeFinish)
    }

    /// The streamed words do not depend on the chunking at all: the same audio in three different random
    /// chunkings, and in one piece, gives identical words, times and confidences, so nothing is lost or
    /// doubled where a chunk ends, in a word or between utterances.
    @Test func wordsDoNotDependOnChunkBoundaries() throws {
        let script = try MeetingScript.generate(seed: 31, speakerCount: 2, turnCount: 6)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 31)
        let whole = try StreamingRecognizer(pool: Self.pool, sampleRate: meeting.sampleRate)
        let reference = try whole.process(meeting.audio) + whole.finish()
        let referenceWords = reference.flatMap(\.words)
        #expect(referenceWords.count >= meeting.words.count / 2, "heard \(referenceWords.map(\.text))")
        for seed: UInt64 in [1, 2, 3] {
            let streamed = try Self.stream(meeting.audio, sampleRate: meeting.sampleRate, seed: seed).utterances
            #expect(streamed.flatMap(\.words) == referenceWords)
            #expect(streamed.map(\.startSeconds) == reference.map(\.startSeconds))
        }
        // Utterances tile the stream: each starts where the previous ended, from 0 to the last sample.
        #expect(reference.first?.startSeconds == 0)
        #expect(abs((reference.last?.endSeconds ?? 0) - meeting.durationSeconds) < 1e-9)
        for (a, b) in zip(reference, reference.dropFirst()) { #expect(a.endSeconds == b.startSeconds) }
        #expect(reference.map(\.index) == Array(reference.indices))
        #expect(reference.allSatisfy { $0.failure == nil })
    }

    /// Against the batch recogniser on the whole recording: sentences at 22.05 kHz (so the resampler
    /// runs) streamed in random chunks. The words may differ only where the stream cuts differently
    /// (its noise floor is a running one, a long pause closes early), so they must agree closely:
    /// measured word error rate of the streamed words against the batch words 0.0 on these sentences;
    /// 0.1 allows one or two words to come out differently on another espeak-ng or PocketSphinx build.
    /// Times must agree within 0.05 s for the words both have.
    @Test func streamedWordsMatchTheBatchRecogniser() throws {
        let recording = try Fixtures.recording(Fixtures.sentences, gapSeconds: 1.5)
        let batch = try Self.pool.withRecognizer { try $0.recognize(recording.audio) }
        let (utterances, beforeFinish) = try Self.stream(recording.audio.samples, sampleRate: recording.audio.sampleRate, seed: 7)
        let streamed = utterances.flatMap(\.words)
        let disagreement = Fixtures.wordErrorRate(reference: batch.map(\.text), hypothesis: streamed.map(\.text))
        let truthWER = Fixtures.wordErrorRate(reference: recording.referenceWords, hypothesis: streamed.map(\.text))
        print("streamed vs batch: \(streamed.count) vs \(batch.count) words, disagreement \(String(format: "%.3f", disagreement)), "
              + "streamed WER against the text \(String(format: "%.3f", truthWER)), \(utterances.count) utterances")
        #expect(disagreement <= 0.1, "batch: \(batch.map(\.text).joined(separator: " "))\nstream: \(streamed.map(\.text).joined(separator: " "))")
        if disagreement == 0 {
            for (a, b) in zip(batch, streamed) {
                #expect(abs(a.startSeconds - b.startSeconds) <= 0.05 && abs(a.endSeconds - b.endSeconds) <= 0.05)
            }
        }
        // Every sentence came out before `finish`: the 1.5 s pause after each closes its utterance 0.3 s in,
        // so `finish` is left with trailing silence only.
        let early = utterances.prefix(beforeFinish).flatMap(\.words)
        for span in recording.spans {
            #expect(early.contains { span.contains(($0.startSeconds + $0.endSeconds) / 2) })
        }
        #expect(utterances.dropFirst(beforeFinish).allSatisfy { $0.words.isEmpty })
    }

    /// Word times are on the caller's timeline: the same audio streamed with an offset gives the same
    /// words shifted by exactly that offset.
    @Test func offsetMovesEveryWord() throws {
        let recording = try Fixtures.recording(Array(Fixtures.sentences.prefix(2)), gapSeconds: 1.0)
        let plain = try Self.stream(recording.audio.samples, sampleRate: recording.audio.sampleRate, seed: 3).utterances.flatMap(\.words)
        let shifted = try Self.stream(recording.audio.samples, sampleRate: recording.audio.sampleRate, seed: 4, offsetSeconds: 125.5)
            .utterances.flatMap(\.words)
        #expect(!plain.isEmpty)
        #expect(plain.map(\.text) == shifted.map(\.text))
        for (a, b) in zip(plain, shifted) {
            #expect(abs(b.startSeconds - a.startSeconds - 125.5) < 1e-6 && abs(b.endSeconds - a.endSeconds - 125.5) < 1e-6)
        }
    }

    @Test func aFinishedStreamRefusesMoreAudio() throws {
        let recognizer = try StreamingRecognizer(pool: Self.pool, sampleRate: 16_000)
        #expect(try recognizer.finish().isEmpty)
        #expect(throws: RecognizerError(.streamFinished, "the stream was finished; start a new one")) {
            try recognizer.process([0, 0, 0])
        }
        #expect((try? recognizer.finish()) == nil)
        #expect(throws: RecognizerError.self) { try StreamingRecognizer(pool: Self.pool, sampleRate: 96_000) }
        let fresh = try StreamingRecognizer(pool: Self.pool, sampleRate: 16_000)
        #expect(throws: RecognizerError.self) { try fresh.process([0, .nan]) }
    }

    /// A pool whose model folder does not exist says so when asked to prepare, and a stream on it
    /// reports the failure on its utterances instead of throwing or losing the stream.
    @Test func aMissingModelIsReportedNotFatal() throws {
        let missing = RecognizerPool(config: RecognizerConfig(modelDirectory: "/nonexistent/pocketsphinx"), logger: Fixtures.logger)
        #expect(throws: RecognizerError.self) { try missing.prepare() }
        do {
            try missing.prepare()
        } catch let error as RecognizerError {
            #expect(error.code == .modelNotFound)
        }
        #expect(missing.loadedCount == 0)
        let recognizer = try StreamingRecognizer(pool: missing, sampleRate: 16_000)
        let speech = try Fixtures.speak(Fixtures.sentences[3])
        let resampled = try StreamingResampler.resample(speech).samples
        let utterances = try recognizer.process(resampled) + recognizer.finish()
        #expect(!utterances.isEmpty)
        #expect(utterances.allSatisfy { $0.words.isEmpty && $0.failure?.code == .modelNotFound })
    }
}

@Suite struct StreamingUtteranceSegmenterTests {
    static func cuts(_ samples: [Float], config: RecognizerConfig, chunk: Int) -> [Range<Int>] {
        var segmenter = StreamingUtteranceSegmenter(config: config)
        var ranges: [Range<Int>] = []
        var offset = 0
        while offset < samples.count {
            ranges += segmenter.process(samples[offset ..< min(samples.count, offset + chunk)])
            offset += chunk
        }
        if let last = segmenter.finish() { ranges.append(last) }
        return ranges
    }

    /// The stream's cuts fall in the same gaps as the batch segmenter's, never inside a sentence, tile
    /// the audio, and do not depend on the chunk size.
    @Test func cutsInTheSameGapsAsTheBatchSegmenter() throws {
        let recording = try Fixtures.recording(Array(Fixtures.sentences.prefix(3)), gapSeconds: 1.0)
        let audio = try StreamingResampler.resample(recording.audio).samples
        let config = RecognizerConfig()
        let batch = UtteranceSegmenter(config: config).utterances(audio)
        let streamed = Self.cuts(audio, config: config, chunk: 1600)
        UtteranceSegmenterTests.expectContiguous(streamed, count: audio.count)
        #expect(Self.cuts(audio, config: config, chunk: 333) == streamed)
        #expect(Self.cuts(audio, config: config, chunk: audio.count) == streamed)
        let streamCuts = streamed.dropFirst().map { Double($0.lowerBound) / 16_000 }
        let batchCuts = batch.dropFirst().map { Double($0.lowerBound) / 16_000 }
        for (a, b) in zip(recording.spans, recording.spans.dropFirst()) {
            let gap = a.upperBound ..< b.lowerBound
            #expect(streamCuts.filter { gap.contains($0) }.count == batchCuts.filter { gap.contains($0) }.count)
        }
        for span in recording.spans {
            #expect(!streamCuts.contains { span.contains($0) }, "cut inside speech \(span): \(streamCuts)")
        }
    }

    /// A real recording (no digital silence, a moving floor) never yields an utterance over the limit.
    @Test func neverExceedsTheMaximumUtteranceLength() throws {
        let wav = try #require(TestData.file("ami-dev/dev00.wav"), "set SPEAKERSYNC_TEST_DATA")
        let audio = try WAVFile.read(contentsOf: wav)
        for maxSeconds in [2.0, 5.0] {
            let ranges = Self.cuts(audio.samples, config: RecognizerConfig(maxUtteranceSeconds: maxSeconds), chunk: 1000)
            UtteranceSegmenterTests.expectContiguous(ranges, count: audio.samples.count)
            for range in ranges { #expect(Double(range.count) / 16_000 <= maxSeconds + 0.01) }
            #expect(ranges.count >= Int((audio.durationSeconds / maxSeconds).rounded(.up)))
        }
    }

    /// The histogram percentile is within half a bin of the sorted order statistic the batch segmenter
    /// takes, and forgets frames older than its window.
    @Test func noiseFloorFollowsTheSortedPercentile() {
        var random = SeededRandom(seed: 11)
        var estimate = NoiseFloorEstimate(windowFrames: 500)
        var levels: [Double] = []
        for _ in 0 ..< 2000 {
            let level = random.uniform(-95 ... -10)
            estimate.add(level)
            levels.append(level)
            let window = levels.suffix(500).sorted()
            #expect(abs(estimate.percentile(0.1) - window[window.count / 10]) <= 0.05 + 1e-9)
        }
        #expect(estimate.count == 500)
    }
}
