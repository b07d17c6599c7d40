import Foundation
import SpeakerEmbedding
import Testing

/// Whether the embeddings tell voices apart on real meeting audio: 2.5 s single-speaker segments cut
/// from the reference RTTMs' non-overlapped turns of sample.wav and the AMI excerpts.
@Suite struct SpeakerSeparationTests {
    static let segmentSeconds = 2.5
    /// A few segments per speaker and recording, so one long monologue does not dominate the pairs.
    static let segmentsPerSpeakerAndRecording = 4

    struct Segment {
        var recording: String
        var speaker: String
        var embedding: [Float]
    }

    static func segments() throws -> [Segment] {
        let encoder = try EncoderFixture.encoder()
        let rate = Double(SpeakerEncoder.sampleRate)
        var turns = try EncoderFixture.turns(rttm: "ami-dev/reference.rttm")
        turns += try EncoderFixture.turns(rttm: "sample/sample.rttm")
        var segments: [Segment] = []
        var audio: [String: [Float]] = [:]
        var taken: [String: Int] = [:]
        for region in EncoderFixture.soloRegions(turns) {
            var start = region.startSeconds
            while start + segmentSeconds <= region.endSeconds,
                  taken["\(region.recording)/\(region.speaker)", default: 0] < segmentsPerSpeakerAndRecording {
                if audio[region.recording] == nil {
                    audio[region.recording] = try EncoderFixture.recording(
                        region.recording == "sample" ? "sample/sample.wav" : "ami-dev/\(region.recording).wav")
                }
                let samples = audio[region.recording]!
                let first = Int(start * rate), last = min(samples.count, Int((start + segmentSeconds) * rate))
                let embedding = try encoder.embedUtterance(samples: Array(samples[first ..< last]), sampleRate: SpeakerEncoder.sampleRate).embedding
                // AMI speaker ids are global (MEE009 speaks in dev00 and dev01); sample.wav's are its own.
                let speaker = region.recording == "sample" ? "sample/\(region.speaker)" : region.speaker
                segments.append(Segment(recording: region.recording, speaker: speaker, embedding: embedding))
                taken["\(region.recording)/\(region.speaker)", default: 0] += 1
                start += segmentSeconds
            }
        }
        return segments
    }

    @Test func sameSpeakerPairsAreCloserThanDifferentSpeakerPairs() throws {
        let segments = try Self.segments()
        var same: [Float] = [], different: [Float] = [], differentSameRecording: [Float] = []
        for i in segments.indices {
            for j in segments.indices where j > i {
                let cosine = SpeakerEncoder.cosineSimilarity(segments[i].embedding, segments[j].embedding)
                if segments[i].speaker == segments[j].speaker {
                    same.append(cosine)
                } else {
                    different.append(cosine)
                    if segments[i].recording == segments[j].recording { differentSameRecording.append(cosine) }
                }
            }
        }
        try #require(Set(segments.map(\.speaker)).count >= 4 && same.count >= 20 && differentSameRecording.count >= 10,
                     "too few single-speaker segments: \(segments.count) from \(Set(segments.map(\.speaker)).count) speakers")
        let meanSame = mean(same), meanDifferent = mean(different), meanDifferentSameRecording = mean(differentSameRecording)
        let eer = equalErrorRate(same: same, different: different)
        print("""
            GE2E speaker separation: \(segments.count) segments of \(Self.segmentSeconds) s, \(Set(segments.map(\.speaker)).count) speakers
              same speaker:       \(same.count) pairs, mean \(fmt(meanSame)), min \(fmt(same.min()!)), max \(fmt(same.max()!))
              different speaker:  \(different.count) pairs, mean \(fmt(meanDifferent)), min \(fmt(different.min()!)), max \(fmt(different.max()!))
              different speaker, same recording: \(differentSameRecording.count) pairs, mean \(fmt(meanDifferentSameRecording))
              equal error rate:   \(fmt(eer * 100)) %
            """)
        // A speaker encoder worth using puts the two distributions clearly apart, also when the
        // channel (recording) is shared; the EER bound is loose for 2.5 s far-field segments.
        #expect(meanSame - meanDifferent >= 0.1, "same \(meanSame) vs different \(meanDifferent)")
        #expect(meanSame - meanDifferentSameRecording >= 0.1, "same \(meanSame) vs different in one recording \(meanDifferentSameRecording)")
        #expect(eer < 0.25, "equal error rate \(eer)")
    }

    private func mean(_ values: [Float]) -> Float { values.reduce(0, +) / Float(values.count) }

    private func fmt(_ value: Float) -> String { String(format: "%.3f", value) }

    /// The rate at which a single cosine threshold rejects same-speaker pairs as often as it accepts
    /// different-speaker ones.
    private func equalErrorRate(same: [Float], different: [Float]) -> Float {
        let thresholds = (same + different).sorted()
        var best: (gap: Float, rate: Float) = (.infinity, 1)
        for threshold in thresholds {
            let falseRejection = Float(same.filter { $0 < threshold }.count) / Float(same.count)
            let falseAcceptance = Float(different.filter { $0 >= threshold }.count) / Float(different.count)
            if abs(falseRejection - falseAcceptance) < best.gap {
                best = (abs(falseRejection - falseAcceptance), (falseRejection + falseAcceptance) / 2)
            }
        }
        return best.rate
    }
}
