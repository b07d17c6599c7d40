import Foundation
import Synchronization
import Testing
import VoiceActivity

/// The real sherpa-onnx library (dlopen'd from vendor/) and silero model on the shared recordings.
@Suite("silero VAD on real audio")
struct SileroVoiceActivityDetectorTests {
    static let windowSeconds = 512.0 / 16_000

    /// Measured with VADConfig.default (docs/vad.md): sample 100 % covered, 0.97 s false alarm;
    /// ami-dev 91.8 % covered, 4.45 s false alarm over 330 s. Bounds leave margin below/above those.
    @Test func coversReferenceSpeechOnSample() throws {
        let recording = try Recordings.sample()
        let detector = try Recordings.detector()
        let stream = Recordings.stream(recording.samples, through: detector, chunk: 1600)
        let score = SpeechCoverage(reference: recording.reference, detected: stream.segments)
        #expect(score.coverage >= 0.95, "coverage \(score.coverage)")
        #expect(score.falseAlarmSeconds <= 2.0, "false alarm \(score.falseAlarmSeconds) s of 30 s")
    }

    @Test func coversReferenceSpeechOnAMI() throws {
        let detector = try Recordings.detector()
        var total = SpeechCoverage()
        for name in Recordings.amiNames {
            let recording = try Recordings.ami(name)
            detector.reset()
            let stream = Recordings.stream(recording.samples, through: detector, chunk: 1600)
            total = total + SpeechCoverage(reference: recording.reference, detected: stream.segments)
        }
        let audioSeconds = Double(Recordings.amiNames.count) * 30
        #expect(total.coverage >= 0.90, "coverage \(total.coverage)")
        #expect(total.falseAlarmSeconds <= 0.03 * audioSeconds, "false alarm \(total.falseAlarmSeconds) s of \(audioSeconds) s")
    }

    @Test(arguments: ["sample", "dev00", "trn08"])
    func segmentsDoNotDependOnChunkSize(name: String) throws {
        let recording = try name == "sample" ? Recordings.sample() : Recordings.ami(name)
        let runs = try [160, 1600, 7777].map { chunk in
            Recordings.stream(recording.samples, through: try Recordings.detector(), chunk: chunk).segments
        }
        #expect(!runs[0].isEmpty)
        for run in runs.dropFirst() {
            try #require(run.count == runs[0].count, "\(run) vs \(runs[0])")
            for (segment, first) in zip(run, runs[0]) {
                #expect(abs(segment.startSeconds - first.startSeconds) <= Self.windowSeconds)
                #expect(abs(segment.endSeconds - first.endSeconds) <= Self.windowSeconds)
            }
        }
    }

    @Test func silenceGivesNoSegments() throws {
        let detector = try Recordings.detector()
        let stream = Recordings.stream([Float](repeating: 0, count: 10 * 16_000), through: detector, chunk: 1600)
        #expect(stream.segments.isEmpty)
        #expect(stream.onsets.isEmpty)
        #expect(!detector.isSpeechActive)
        #expect(detector.receivedSeconds == 10)
    }

    @Test func segmentsAreOrderedPaddedAndInsideTheAudio() throws {
        let recording = try Recordings.ami("dev01")
        let detector = try Recordings.detector()
        let stream = Recordings.stream(recording.samples, through: detector, chunk: 1600)
        #expect(stream.segments.count >= 2)
        var previousEnd = 0.0
        for segment in stream.segments {
            #expect(segment.startSeconds >= previousEnd)
            #expect(segment.endSeconds > segment.startSeconds)
            previousEnd = segment.endSeconds
        }
        #expect(previousEnd <= Double(recording.samples.count) / 16_000)
    }

    /// The live state: speech is announced with the start its segment will have, well before the
    /// segment closes, and the model runs at most two windows behind the audio received.
    @Test func ongoingSpeechIsReportedBeforeTheSegmentCloses() throws {
        let recording = try Recordings.sample()
        let detector = try Recordings.detector()
        let stream = Recordings.stream(recording.samples, through: detector, chunk: 1600)
        #expect(!stream.segments.isEmpty)
        for (segment, poppedAt) in zip(stream.segments, stream.poppedAtSeconds) {
            let onset = try #require(
                stream.onsets.first { abs($0.startSeconds - segment.startSeconds) <= Self.windowSeconds },
                "no onset announced for \(segment)")
            #expect(onset.receivedSeconds < poppedAt)
            #expect(onset.receivedSeconds < segment.endSeconds)
        }
        for lag in stream.lags {
            #expect(lag >= 0)
            #expect(lag < (2 * 512 + 64) / 16_000.0)
        }
    }

    @Test func resetStartsANewTimeline() throws {
        let recording = try Recordings.ami("trn04")
        let detector = try Recordings.detector()
        let first = Recordings.stream(recording.samples, through: detector, chunk: 1600).segments
        detector.accept(samples: Array(recording.samples[0..<16_000]))
        detector.reset()
        #expect(detector.receivedSeconds == 0)
        #expect(!detector.isSpeechActive)
        let second = Recordings.stream(recording.samples, through: detector, chunk: 1600).segments
        #expect(!first.isEmpty)
        #expect(first == second)
    }

    /// After a flush the stream continues on the same timeline.
    @Test func flushClosesTheOngoingSegmentAndTheStreamContinues() throws {
        let recording = try Recordings.ami("trn09")  // speech throughout
        let detector = try Recordings.detector()
        let half = recording.samples.count / 2
        detector.accept(samples: Array(recording.samples[0..<half]))
        #expect(detector.isSpeechActive)
        let beforeFlush = detector.popSegments()
        detector.flush()
        let flushed = detector.popSegments()
        let closed = try #require(flushed.last)
        #expect(!detector.isSpeechActive)
        #expect(abs(closed.endSeconds - Double(half) / 16_000) <= 1e-9)
        detector.accept(samples: Array(recording.samples[half...]))
        detector.flush()
        let later = detector.popSegments()
        let next = try #require(later.first)
        #expect(next.startSeconds >= closed.endSeconds)
        let durationSeconds = Double(recording.samples.count) / 16_000
        #expect((beforeFlush + flushed + later).last!.endSeconds <= durationSeconds)
        #expect(abs(later.last!.endSeconds - durationSeconds) <= 1e-9)  // end padding reaches the last sample
    }

    @Test func nonFiniteSamplesAreReadAsSilence() throws {
        let detector = try Recordings.detector()
        var samples = [Float](repeating: 0, count: 3 * 16_000)
        for index in stride(from: 0, to: samples.count, by: 7) { samples[index] = index % 2 == 0 ? .nan : .infinity }
        let stream = Recordings.stream(samples, through: detector, chunk: 1600)
        #expect(stream.segments.isEmpty)
        #expect(detector.replacedNonFiniteSampleCount == (samples.count + 6) / 7)
    }

    /// Detectors share the process-wide library but nothing else: two streams at once on two threads
    /// give what each gives alone.
    @Test func independentDetectorsRunConcurrently() throws {
        let sample = try Recordings.sample()
        let ami = try Recordings.ami("dev00")
        let alone = try [sample, ami].map { Recordings.stream($0.samples, through: try Recordings.detector(), chunk: 1600).segments }
        let detectors = try [Recordings.detector(), Recordings.detector()]
        let inputs = [sample.samples, ami.samples]
        let results = Mutex<[[SpeechSegment]]>([[], []])
        DispatchQueue.concurrentPerform(iterations: 2) { index in
            let segments = Recordings.stream(inputs[index], through: detectors[index], chunk: 1600).segments
            results.withLock { $0[index] = segments }
        }
        #expect(results.withLock { $0 } == alone)
    }
}
