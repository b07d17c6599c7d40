import Testing
import TranscriptMerge
@testable import SpeakerSyncServer

/// The measurements behind the `stats` message: label latency per word and the live turn timeline.
@Suite struct LabelLatencyTrackerTests {
    let a0 = WordID("r1", 0)
    let a1 = WordID("r1", 1)

    @Test func latencyRunsFromTheLaterOfWordsAndAudioToTheFirstAndLastLabel() {
        var tracker = LabelLatencyTracker()
        tracker.audioArrived(upTo: 1.0, at: 10.0)
        // a0 ends inside the audio already received: ready when its words arrive (t=10.2).
        // a1 ends at 1.5: ready when audio reaches 1.5 (t=10.7).
        tracker.wordsArrived([(a0, 0.8), (a1, 1.5)], at: 10.2)
        tracker.audioArrived(upTo: 1.4, at: 10.5)
        tracker.audioArrived(upTo: 1.6, at: 10.7)
        tracker.labelsSent([(a0, "Speaker 1"), (a1, nil)], at: 10.9)
        tracker.labelsSent([(a0, "Speaker 1"), (a1, "Speaker 2")], at: 11.2)
        tracker.labelsSent([(a0, "Speaker 2"), (a1, "Speaker 2")], at: 12.0)
        let latencies = tracker.latencies()
        #expect(latencies.first.count == 2)
        #expect(abs(latencies.first[0] - 0.7) < 1e-9)   // a0: 10.9 − 10.2
        #expect(abs(latencies.first[1] - 0.5) < 1e-9)   // a1: 11.2 − 10.7
        #expect(abs(latencies.final[0] - 1.8) < 1e-9)   // a0 changed speaker at 12.0
        #expect(abs(latencies.final[1] - 0.5) < 1e-9)   // a1 never changed
    }

    @Test func replacedResultsKeepTheFirstArrivalAndRemovedWordsAreNotMeasured() {
        var tracker = LabelLatencyTracker()
        tracker.audioArrived(upTo: 5, at: 0)
        tracker.wordsArrived([(a0, 1), (a1, 2)], at: 1.0)
        tracker.wordsArrived([(a0, 1)], at: 2.0)   // the final result has one word
        tracker.wordsRemoved([a1])
        tracker.labelsSent([(a0, "Speaker 1"), (a1, "Speaker 1")], at: 3.0)
        #expect(tracker.latencies().first == [2.0])
    }

    @Test func wordsWhoseAudioNeverCompletesAreReadyAtTheEndAndEarlyLabelsCountAsZero() {
        var tracker = LabelLatencyTracker()
        tracker.wordsArrived([(a0, 9.0)], at: 1.0)
        tracker.labelsSent([(a0, "Speaker 1")], at: 1.5)   // a device turn labelled it before its audio came
        tracker.audioArrived(upTo: 8.9, at: 2.0)
        tracker.audioEnded(at: 3.0)
        tracker.labelsSent([(a0, "Speaker 1")], at: 3.5)
        let latencies = tracker.latencies()
        #expect(latencies.first == [0])
        #expect(latencies.final == [0])
    }

    @Test func pastItsCapacityItMeasuresAUniformSampleOfTheSessionsWords() {
        var tracker = LabelLatencyTracker(sampleCapacity: 1_000)
        tracker.audioArrived(upTo: 100_000, at: 0)
        let ids = (0..<10_000).map { WordID("r\($0 / 50)", $0 % 50) }
        for (index, id) in ids.enumerated() {
            tracker.wordsArrived([(id, Double(index))], at: Double(index) * 0.01)
            // Each word is labelled 0.25 s after it was ready.
            tracker.labelsSent([(id, "Speaker 1")], at: Double(index) * 0.01 + 0.25)
        }
        #expect(tracker.measuredWordCount == 1_000)
        let latencies = tracker.latencies()
        #expect(latencies.first.count == 1_000)
        #expect(latencies.first.allSatisfy { abs($0 - 0.25) < 1e-9 })
        // Uniform over the session: each tenth of it holds about a tenth of the sample (binomial,
        // n = 1,000, p = 0.1: 100 ± 9.5; the bounds are over 6 standard deviations out).
        let laterHalf = ids[5_000...]
        let sampledLater = laterHalf.filter { tracker.isMeasured($0) }.count
        #expect(sampledLater > 400 && sampledLater < 600)
        for tenth in 0..<10 {
            let sampled = ids[(tenth * 1_000)..<((tenth + 1) * 1_000)].filter { tracker.isMeasured($0) }.count
            #expect(sampled > 40 && sampled < 160, "tenth \(tenth): \(sampled)")
        }
    }

    @Test func removingSampledWordsKeepsTheSampleConsistent() {
        var tracker = LabelLatencyTracker(sampleCapacity: 4)
        tracker.audioArrived(upTo: 10, at: 0)
        let ids = (0..<4).map { WordID("r", $0) }
        tracker.wordsArrived(ids.map { ($0, 1.0) }, at: 1)
        tracker.wordsRemoved([ids[0], ids[2]])
        #expect(tracker.measuredWordCount == 2)
        // The freed slots take the next words, and every measured word is still labelled correctly.
        tracker.wordsArrived([(WordID("s", 0), 1.0), (WordID("s", 1), 1.0)], at: 2)
        #expect(tracker.measuredWordCount == 4)
        tracker.labelsSent([(ids[1], "A"), (ids[3], "A"), (WordID("s", 0), "A"), (WordID("s", 1), "B")], at: 3)
        #expect(tracker.latencies().first.sorted() == [1, 1, 2, 2])
    }

    @Test func unlabelledWordsAreAbsent() {
        var tracker = LabelLatencyTracker()
        tracker.wordsArrived([(a0, 0.5)], at: 0)
        tracker.audioArrived(upTo: 1, at: 0.1)
        tracker.labelsSent([(a0, nil)], at: 0.2)
        #expect(tracker.latencies().first.isEmpty)
    }
}

@Suite struct LiveTurnTimelineTests {
    @Test func eachStretchKeepsTheFirstLabelPublishedOverIt() {
        var timeline = LiveTurnTimeline()
        timeline.published([SpeakerTurn(id: "t1", speaker: "Speaker 1", startSeconds: 0, endSeconds: 2)])
        // The provider extends t1 and later relabels it: only the new stretch is added, with the label then.
        timeline.published([SpeakerTurn(id: "t1", speaker: "Speaker 1", startSeconds: 0, endSeconds: 3)])
        timeline.published([SpeakerTurn(id: "t1", speaker: "Speaker 2", startSeconds: 0, endSeconds: 3),
                            SpeakerTurn(id: "t2", speaker: "Speaker 2", startSeconds: 3.5, endSeconds: 5)])
        let segments = timeline.segments.map { "\($0.speaker) \($0.startSeconds)-\($0.endSeconds)" }
        #expect(segments == ["Speaker 1 0.0-2.0", "Speaker 1 2.0-3.0", "Speaker 2 3.5-5.0"])
    }

    @Test func overlappingTurnsPublishedTogetherAreBothKept() {
        var timeline = LiveTurnTimeline()
        timeline.published([SpeakerTurn(id: "a", speaker: "Speaker 1", startSeconds: 0, endSeconds: 2),
                            SpeakerTurn(id: "b", speaker: "Speaker 2", startSeconds: 1.5, endSeconds: 3)])
        #expect(timeline.segments.map(\.speaker) == ["Speaker 1", "Speaker 2"])
        #expect(timeline.segments.map(\.startSeconds) == [0, 1.5])
    }
}
