import DiarizationScoring
import SpeakerSyncAudio
import SpeakerSyncClient
import Testing
@testable import SpeakerSyncEval

/// How one streamed session is scored, without a server: the transcript and stats a device received.
@Suite struct FileEvaluationTests {
    let reference = [
        SpeakerSegment(speaker: "A", startSeconds: 0, endSeconds: 4),
        SpeakerSegment(speaker: "B", startSeconds: 3, endSeconds: 8),
    ]

    func recording(words: [(String, Double, Double)]) -> EvalRecording {
        let deviceWords = words.map { DeviceWord(text: $0.0, startSeconds: $0.1, endSeconds: $0.2) }
        let referenceWords = ReferenceWordLabels.label(words.map { (text: $0.0, startSeconds: $0.1, endSeconds: $0.2) }, reference: reference)
        return EvalRecording(id: "m", audio: AudioBuffer(samples: [Float](repeating: 0, count: 8 * 16_000), sampleRate: 16_000),
                             words: deviceWords, reference: reference, uem: [TimeSpan(startSeconds: 0, endSeconds: 8)],
                             referenceWords: referenceWords, deviceSegments: [])
    }

    func stats(final: [SpeakerSegment], live: [SpeakerSegment]) -> SessionStats {
        func turns(_ segments: [SpeakerSegment]) -> String {
            segments.map { "{\"speaker\":\"\($0.speaker)\",\"start\":\($0.startSeconds),\"end\":\($0.endSeconds)}" }.joined(separator: ",")
        }
        let json = """
        {"type":"stats","audio_seconds":8,"words":3,"unlabelled_words":0,"speakers":2,
         "first_label_latency_seconds":[0.1,0.2,0.3],"final_label_latency_seconds":[0.1,0.2,2.0],
         "chunk_processing_seconds":[0.001,0.003],"real_time_factor":0.01,
         "live_turns":[\(turns(live))],"final_turns":[\(turns(final))]}
        """
        return SessionStats(statsMessage: json)!
    }

    func transcript(_ words: [(String, Double, Double, String?)]) -> LiveTranscript {
        var transcript = LiveTranscript()
        let wireWords = words.map {
            WireWord(text: $0.0, startSeconds: $0.1, endSeconds: $0.2, speaker: $0.3, speakerConfidence: nil, confidence: nil,
                     isFinal: true, isStored: true)
        }
        _ = transcript.apply(.transcript(TranscriptUpdate(
            revision: 1, upserted: [WireUtterance(id: "u1", speaker: "Speaker 1", name: "Speaker 1", startSeconds: 0, endSeconds: 8,
                                                  text: "", words: wireWords)],
            removed: [], isFinal: true)))
        return transcript
    }

    @Test func perfectTurnsAndWordsScoreZeroUnderAnyLabelNames() {
        let words = [("one", 0.5, 1.0), ("two", 3.2, 3.6), ("three", 6.0, 6.5)]
        let hypothesis = [SpeakerSegment(speaker: "Speaker 2", startSeconds: 0, endSeconds: 4),
                          SpeakerSegment(speaker: "Speaker 1", startSeconds: 3, endSeconds: 8)]
        let evaluation = FileEvaluation(
            recording: recording(words: words),
            transcript: transcript([("one", 0.5, 1.0, "Speaker 2"), ("two", 3.2, 3.6, "Speaker 1"), ("three", 6.0, 6.5, "Speaker 1")]),
            stats: stats(final: hypothesis, live: hypothesis), memoryPerSessionBytes: 1000, errors: [])
        #expect(evaluation.finalDER.errorRate == 0 && evaluation.finalDERCollar.errorRate == 0 && evaluation.liveDERCollar.errorRate == 0)
        #expect(evaluation.jer == 0)
        #expect(evaluation.wder.alignedWordCount == 3)
        #expect(evaluation.wderOutsideOverlap.mislabelledWordCount == 0)
        // "two" lies in the overlap (3–4 s): reported apart, and Speaker 1 (= B) is one of the two talking.
        #expect(evaluation.overlapWordCount == 1 && evaluation.overlapWordsWithATalkingSpeaker == 1)
        #expect(evaluation.wderOutsideOverlap.alignedWordCount == 2)
        #expect(evaluation.speakers.difference == 0)
        #expect(evaluation.unlabelledWordCount == 0)
    }

    @Test func liveErrorsAndUnlabelledWordsAreCountedApartFromFinalOnes() {
        let words = [("one", 0.5, 1.0), ("two", 5.0, 5.5), ("three", 6.0, 6.5)]
        let final = [SpeakerSegment(speaker: "x", startSeconds: 0, endSeconds: 3), SpeakerSegment(speaker: "y", startSeconds: 3, endSeconds: 8)]
        let live = [SpeakerSegment(speaker: "x", startSeconds: 0, endSeconds: 8)]   // live missed the change
        let evaluation = FileEvaluation(
            recording: recording(words: words),
            transcript: transcript([("one", 0.5, 1.0, "x"), ("two", 5.0, 5.5, "x"), ("three", 6.0, 6.5, nil)]),
            stats: stats(final: final, live: live), memoryPerSessionBytes: nil, errors: [])
        #expect(evaluation.finalDER.errorRate > 0 && evaluation.finalDER.errorRate < evaluation.liveDERCollar.errorRate + 1e-9)
        // x maps to B; A's own 0–3 s is confusion, less the 0.125 s collars at 0 and 3 s.
        #expect(abs(evaluation.liveDERCollar.confusionSeconds - 2.75) < 1e-9)
        #expect(evaluation.unlabelledWordCount == 1)
        #expect(evaluation.wder.mislabelledWordCount == 2)   // "two" on the wrong speaker, "three" without one
    }

    @Test func summaryPoolsComponentsAndLatenciesOverFiles() {
        let words = [("one", 0.5, 1.0)]
        let good = [SpeakerSegment(speaker: "s", startSeconds: 0, endSeconds: 4), SpeakerSegment(speaker: "t", startSeconds: 3, endSeconds: 8)]
        let bad = [SpeakerSegment(speaker: "s", startSeconds: 0, endSeconds: 8)]
        let first = FileEvaluation(recording: recording(words: words), transcript: transcript([("one", 0.5, 1.0, "s")]),
                                   stats: stats(final: good, live: good), memoryPerSessionBytes: 10, errors: [])
        let second = FileEvaluation(recording: recording(words: words), transcript: transcript([("one", 0.5, 1.0, "s")]),
                                    stats: stats(final: bad, live: bad), memoryPerSessionBytes: 30, errors: [])
        let summary = EvalSummary(provider: "p", files: [first, second])
        let pooled = summary.finalDER
        #expect(abs(pooled.referenceSeconds - 18) < 1e-9)
        #expect(abs(pooled.errorRate - (first.finalDER.missedSeconds + first.finalDER.confusionSeconds + first.finalDER.falseAlarmSeconds
                                        + second.finalDER.missedSeconds + second.finalDER.confusionSeconds + second.finalDER.falseAlarmSeconds) / 18) < 1e-9)
        #expect(summary.firstLabelLatency.count == 6)
        #expect(summary.maxMemoryPerSessionBytes == 30)
        #expect(summary.exactSpeakerCountFiles == 1)
        let table = EvalReportFormatter.table(summary)
        #expect(table.split(separator: "\n").count == 4)
        #expect(EvalReportFormatter.json(summary).contains("\"der_collar_0_25\""))
    }
}
