import Foundation
import SpeakerEmbedding
import Testing

/// Batching must not change results; the timings it prints are the encoder's cost per window
/// (meaningful in a release build: see docs/embeddings.md).
@Suite struct BatchingTests {
    @Test func batchedWindowsEqualSingleWindowsAndTimingsArePrinted() throws {
        let encoder = try EncoderFixture.encoder()
        let meeting = try EncoderFixture.recording("ami-dev/trn05.wav")
        let count = SpeakerEncoder.partialSampleCount
        // Eight 1.6 s windows every 0.5 s, plus one shorter window batched apart from them.
        var windows = (0 ..< 8).map { Array(meeting[8_000 * $0 ..< 8_000 * $0 + count]) }
        windows.insert(Array(meeting[200_000 ..< 216_000]), at: 3)
        let clock = ContinuousClock()
        var batched: [[Float]] = []
        let batchedTime = try clock.measure { batched = try encoder.embed(sampleWindows: windows, sampleRate: SpeakerEncoder.sampleRate) }
        var single: [[Float]] = []
        let singleTime = try clock.measure {
            single = try windows.map { try encoder.embed(partial: $0, sampleRate: SpeakerEncoder.sampleRate) }
        }
        #expect(batched.count == windows.count)
        for (index, (a, b)) in zip(batched, single).enumerated() {
            #expect(a.count == SpeakerEncoder.embeddingSize)
            let largest = zip(a, b).map { abs($0 - $1) }.max()!
            #expect(largest <= 1e-5, "window \(index): batched and single differ by \(largest)")
        }
        let mels = try windows.filter { $0.count == count }.map { try encoder.melSpectrogram(samples: $0, sampleRate: SpeakerEncoder.sampleRate).frames(0 ..< 160) }
        let repeats = 3
        let networkTime = try clock.measure { for _ in 0 ..< repeats { _ = try encoder.embed(melWindows: mels) } }
        let perWindow = { (duration: Duration, windows: Int) in Double(duration.components.attoseconds) / 1e15 / Double(windows) + Double(duration.components.seconds) * 1e3 / Double(windows) }
        #if DEBUG
        let build = "debug build: not representative"
        #else
        let build = "release build"
        #endif
        print(String(format: "GE2E encoder timing (%@): batch of %d windows %.2f ms/window, one at a time %.2f ms/window, network only (batch %d) %.2f ms/window",
                     build, windows.count, perWindow(batchedTime, windows.count), perWindow(singleTime, windows.count),
                     mels.count, perWindow(networkTime, mels.count * repeats)))
    }
}
