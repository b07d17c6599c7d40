import DeterministicRandom
import DiarizationModels
import Foundation
import Logging
import SpeakerEmbedding
import SpeakerSyncAudio
import StreamingDiarization
import Testing
import TestSupport

/// speakerkit's final labels must not depend on the last bits of its floats: another CPU's BLAS
/// kernels round GE2E's matrix products differently (OpenBLAS picks Haswell, SkylakeX or Zen code at
/// run time), and sample.wav's final speaker count once followed them (SmoothedKMeans.fit's ties).
@Suite struct RoundingRobustnessTests {
    static let logger = Logger(label: "rounding-robustness-test")

    /// GE2E with every component scaled by 1 + ε·u, u uniform in [−1, 1] from a seeded generator: the
    /// size of a different kernel's rounding (float32's epsilon is 1.2·10⁻⁷; ε = 10⁻⁶).
    struct PerturbedEmbedder: SpeakerEmbedder {
        let inner: GE2EEmbedder
        let seed: UInt64
        var dimension: Int { inner.dimension }

        func embed(_ windows: [[Float]]) throws -> [[Float]] {
            // A generator per call, seeded by the call's first sample, so the noise does not depend on
            // how many calls came before (batched or not) but differs from window to window.
            var generator = SeededRandom(seed: seed &+ UInt64(bitPattern: Int64(windows.first?.first.map { Int($0 * 1e6) } ?? 0)))
            return try inner.embed(windows).map { vector in
                vector.map { $0 * (1 + 1e-6 * Float(2 * generator.unit() - 1)) }
            }
        }
    }

    /// Final turns as a listener sees them: who, from when to when, to the millisecond.
    func finalTurns(_ audio: [Float], embedder: any SpeakerEmbedder) throws -> [String] {
        let diarizer = try makeSpeakerKitDiarizer(embedder: embedder, logger: Self.logger)
        var turns: [UInt64: DiarizerTurn] = [:]
        func take() {
            for turn in diarizer.pullTurns() { if turn.isRemoved { turns[turn.id] = nil } else { turns[turn.id] = turn } }
        }
        for start in stride(from: 0, to: audio.count, by: 1_600) {
            try diarizer.push(Array(audio[start ..< min(audio.count, start + 1_600)]))
            take()
        }
        try diarizer.finalize()
        take()
        return turns.values.sorted { $0.startSeconds < $1.startSeconds }
            .map { String(format: "%d %.3f %.3f", $0.speaker, $0.startSeconds, $0.endSeconds) }
    }

    @Test func samplesFinalTurnsDoNotMoveWithRoundingNoise() throws {
        let file = try #require(TestData.file("sample/sample.wav"), "the shared recordings (SPEAKERSYNC_TEST_DATA)")
        let audio = try WAVFile.read(contentsOf: file).samples
        let ge2e = GE2EEmbedder(encoder: try SpeakerEncoder(logger: Self.logger))
        let exact = try finalTurns(audio, embedder: ge2e)
        #expect(Set(exact.map { $0.split(separator: " ")[0] }).count == 2, "sample.wav's two people: \(exact)")
        for seed: UInt64 in 1 ... 4 {
            #expect(try finalTurns(audio, embedder: PerturbedEmbedder(inner: ge2e, seed: seed)) == exact, "seed \(seed)")
        }
    }
}
