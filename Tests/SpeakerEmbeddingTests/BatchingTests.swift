import Foundation
import SpeakerEmbedding
import Testing

/// Batching must not change results. The test also prints what a window costs, in thread CPU time
/// (what one core spends, whatever else the machine runs); only a release build gives figures worth
/// quoting: see docs/embeddings.md for the command.
@Suite struct BatchingTests {
    @Test func batchedWindowsEqualSingleWindowsAndCostsArePrinted() throws {
        let encoder = try EncoderFixture.encoder()
        let meeting = try EncoderFixture.recording("ami-dev/trn05.wav")
        let rate = SpeakerEncoder.sampleRate, count = SpeakerEncoder.partialSampleCount
        // Sixteen 1.6 s windows every 0.5 s, as a diarizer would cut them, plus one shorter window that
        // is batched apart from them.
        var windows = (0 ..< 16).map { Array(meeting[rate / 2 * $0 ..< rate / 2 * $0 + count]) }
        windows.insert(Array(meeting[200_000 ..< 216_000]), at: 3)
        let batched = try encoder.embed(sampleWindows: windows, sampleRate: rate)
        let single = try windows.map { try encoder.embed(partial: $0, sampleRate: rate) }
        #expect(batched.count == windows.count)
        for (index, (a, b)) in zip(batched, single).enumerated() {
            #expect(a.count == SpeakerEncoder.embeddingSize)
            let largest = zip(a, b).map { abs($0 - $1) }.max()!
            #expect(largest <= 1e-5, "window \(index): batched and single differ by \(largest)")
        }

        let full = windows.filter { $0.count == count }
        #if DEBUG
        let build = "debug build, not representative", repeats = 1
        #else
        let build = "release build", repeats = 5
        #endif
        func millisecondsPerWindow(_ windowsPerCall: Int, _ body: () throws -> Void) rethrows -> Double {
            let start = Self.threadCPUMilliseconds()
            for _ in 0 ..< repeats { try body() }
            return (Self.threadCPUMilliseconds() - start) / Double(repeats * windowsPerCall)
        }
        let eight = Array(full.prefix(8))
        let batch8 = try millisecondsPerWindow(8) { _ = try encoder.embed(sampleWindows: eight, sampleRate: rate) }
        let batch16 = try millisecondsPerWindow(16) { _ = try encoder.embed(sampleWindows: full, sampleRate: rate) }
        let one = try millisecondsPerWindow(8) { for window in eight { _ = try encoder.embed(partial: window, sampleRate: rate) } }
        let mels = try eight.map { try encoder.melSpectrogram(samples: $0, sampleRate: rate).frames(0 ..< SpeakerEncoder.partialFrameCount) }
        let network8 = try millisecondsPerWindow(8) { _ = try encoder.embed(melWindows: mels) }
        let frontEnd = try millisecondsPerWindow(8) { for window in eight { _ = try encoder.melSpectrogram(samples: window, sampleRate: rate) } }
        print(String(
            format: "GE2E encoder cost (%@), thread CPU ms per 1.6 s window: batch of 8 %.2f, batch of 16 %.2f, one at a time %.2f; network alone (batch of 8) %.2f, mel front end %.2f. RTF at one window per 0.5 s: %.4f (batch 8), %.4f (batch 16), %.4f (one at a time)",
            build, batch8, batch16, one, network8, frontEnd, batch8 / 500, batch16 / 500, one / 500))
    }

    /// Sessions share one encoder from their own queues; concurrent calls (OpenBLAS included) must
    /// give what serial calls give.
    @Test func concurrentCallsGiveSerialResults() async throws {
        let encoder = try EncoderFixture.encoder()
        let meeting = try EncoderFixture.recording("ami-dev/trn07.wav")
        let rate = SpeakerEncoder.sampleRate
        let windows = (0 ..< 4).map { Array(meeting[rate * 3 * $0 ..< rate * 3 * $0 + SpeakerEncoder.partialSampleCount]) }
        let serial = try encoder.embed(sampleWindows: windows, sampleRate: rate)
        let concurrent = try await withThrowingTaskGroup(of: (Int, [[Float]]).self) { group in
            for task in 0 ..< 4 {
                group.addTask {
                    // Each task batches the windows differently: all at once, or one at a time.
                    let result = task % 2 == 0
                        ? try encoder.embed(sampleWindows: windows, sampleRate: rate)
                        : try windows.map { try encoder.embed(partial: $0, sampleRate: rate) }
                    return (task, result)
                }
            }
            return try await group.reduce(into: [Int: [[Float]]]()) { $0[$1.0] = $1.1 }
        }
        for (task, result) in concurrent {
            for (index, (a, b)) in zip(result, serial).enumerated() {
                #expect(zip(a, b).allSatisfy { abs($0 - $1) <= 1e-5 }, "task \(task) window \(index)")
            }
        }
    }

    static func threadCPUMilliseconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e3 + Double(time.tv_nsec) / 1e6
    }
}
