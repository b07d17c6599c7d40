import Foundation
import SpeakerEmbedding
import Testing

/// Whether the embeddings tell voices apart on real meeting audio: 2 s single-speaker segments cut
/// from the reference RTTMs' non-overlapped turns of sample.wav and the AMI excerpts.
@Suite struct SpeakerSeparationTests {
    static let segmentSeconds = 2.0
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
        var same: [Float] = [], different: [Float] = []
        var sameInRecording: [Float] = [], differentInRecording: [Float] = []
        for i in segments.indices {
            for j in segments.indices where j > i {
                let cosine = SpeakerEncoder.cosineSimilarity(segments[i].embedding, segments[j].embedding)
                let sameSpeaker = segments[i].speaker == segments[j].speaker
                if sameSpeaker { same.append(cosine) } else { different.append(cosine) }
                if segments[i].recording == segments[j].recording {
                    if sameSpeaker { sameInRecording.append(cosine) } else { differentInRecording.append(cosine) }
                }
            }
        }
        let speakers = Set(segments.map(\.speaker)).count
        try #require(speakers >= 4 && same.count >= 20 && differentInRecording.count >= 10,
                     "too few single-speaker segments: \(segments.count) from \(speakers) speakers")
        let eer = equalErrorRate(same: same, different: different)
        print("""
            GE2E speaker separation: \(segments.count) segments of \(Self.segmentSeconds) s, \(speakers) speakers
              same speaker:       \(summary(same))
              different speaker:  \(summary(different))
              within one recording, same speaker:      \(summary(sameInRecording))
              within one recording, different speaker: \(summary(differentInRecording))
              equal error rate (all pairs): \(fmt(eer * 100)) %
            """)
        // A speaker encoder worth using puts the two distributions clearly apart. Within one recording
        // (same room and microphone, where diarization actually compares voices) the pairs are few
        // and the far-field AMI mix brings voices closer, so there only the order is required.
        #expect(mean(same) - mean(different) >= 0.1, "same \(mean(same)) vs different \(mean(different))")
        #expect(mean(sameInRecording) > mean(differentInRecording),
                "within a recording: same \(mean(sameInRecording)) vs different \(mean(differentInRecording))")
        #expect(eer < 0.25, "equal error rate \(eer)")
    }

    private func summary(_ values: [Float]) -> String {
        "\(values.count) pairs, mean \(fmt(mean(values))), min \(fmt(values.min()!)), max \(fmt(values.max()!))"
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
