import SpeakerSyncAudio
import TestSupport
import Testing
@testable import SpeechRecognition

@Suite struct UtteranceSegmenterTests {
    /// Ranges must tile the recording: no sample decoded twice, none skipped.
    static func expectContiguous(_ ranges: [Range<Int>], count: Int) {
        #expect(ranges.first?.lowerBound == 0)
        #expect(ranges.last?.upperBound == count)
        for (a, b) in zip(ranges, ranges.dropFirst()) { #expect(a.upperBound == b.lowerBound) }
    }

    @Test func cutsInTheSilenceBetweenSentences() throws {
        let recording = try Fixtures.recording(Array(Fixtures.sentences.prefix(3)), gapSeconds: 1.0)
        let audio = try StreamingResampler.resample(recording.audio)
        let ranges = UtteranceSegmenter(config: RecognizerConfig()).utterances(audio.samples)
        Self.expectContiguous(ranges, count: audio.samples.count)
        let cutSeconds = ranges.dropFirst().map { Double($0.lowerBound) / 16_000 }
        // One cut in each gap between sentences and none inside a sentence.
        for (a, b) in zip(recording.spans, recording.spans.dropFirst()) {
            #expect(cutSeconds.filter { $0 > a.upperBound && $0 < b.lowerBound }.count == 1)
        }
        for span in recording.spans {
            #expect(!cutSeconds.contains { span.contains($0) }, "cut inside speech \(span): \(cutSeconds)")
        }
    }

    @Test func neverExceedsTheMaximumUtteranceLength() throws {
        let wav = try #require(TestData.file("ami-dev/dev00.wav"), "set SPEAKERSYNC_TEST_DATA")
        let audio = try WAVFile.read(contentsOf: wav)
        for maxSeconds in [2.0, 5.0, 30.0] {
            let ranges = UtteranceSegmenter(config: RecognizerConfig(maxUtteranceSeconds: maxSeconds)).utterances(audio.samples)
            Self.expectContiguous(ranges, count: audio.samples.count)
            for range in ranges { #expect(Double(range.count) / 16_000 <= maxSeconds + 0.01) }
            if maxSeconds < audio.durationSeconds {
                #expect(ranges.count >= Int((audio.durationSeconds / maxSeconds).rounded(.up)))
            }
        }
    }
}
