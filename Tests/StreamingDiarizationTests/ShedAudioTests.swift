import Foundation
import Testing
@testable import StreamingDiarization

@Suite struct ShedAudioTests {
    /// A recognisable session: sample n is n / 40000 (exact in 16-bit to within one step).
    static let session = (0 ..< 400_000).map { Float($0 % 20_000) / 40_000 }

    static func window(_ start: Int, _ end: Int) -> [Float] { Array(session[start ..< end]) }

    @Test func overlappingWindowsAreKeptOnceAndComeBackAsTheyWere() {
        var kept = ShedAudio(capacitySamples: 100_000)
        // Three consecutive frames' 1.5 s windows at a 0.5 s hop, then one far away.
        for (n, start) in [0, 8_000, 16_000, 200_000].enumerated() {
            let taken = kept.retain(region: 0, frame: n, startSample: start, window: Self.window(start, start + 24_000))
            #expect(taken)
        }
        #expect(kept.sampleCount == 40_000 + 24_000) // 0–40000 joined, and the far window
        for frame in kept.frames {
            let back = kept.window(of: frame), given = Self.window(frame.startSample, frame.endSample)
            #expect(back.count == given.count)
            #expect(zip(back, given).allSatisfy { abs($0 - $1) <= 1.0 / 32_768 })
        }
        // A window inside what is held costs nothing; one out of order is kept on its own.
        let inside = kept.retain(region: 0, frame: 9, startSample: 4_000, window: Self.window(4_000, 20_000))
        #expect(inside)
        #expect(kept.sampleCount == 64_000)
        let apart = kept.retain(region: 0, frame: 10, startSample: 100_000, window: Self.window(100_000, 110_000))
        #expect(apart)
        #expect(kept.sampleCount == 74_000)
        #expect(kept.frames.count == 6)
        #expect(zip(kept.window(of: kept.frames[5]), Self.window(100_000, 110_000)).allSatisfy { abs($0 - $1) <= 1.0 / 32_768 })
    }

    @Test func theAllowanceBoundsTheDistinctSamples() {
        var kept = ShedAudio(capacitySamples: 30_000)
        let first = kept.retain(region: 0, frame: 0, startSample: 0, window: Self.window(0, 24_000))
        #expect(first)
        // 8 000 new samples would pass 30 000: refused, nothing kept for it.
        let tooMany = kept.retain(region: 0, frame: 1, startSample: 8_000, window: Self.window(8_000, 32_000))
        #expect(!tooMany)
        #expect(kept.sampleCount == 24_000 && kept.frames.count == 1)
        // 6 000 new ones fit.
        let fits = kept.retain(region: 0, frame: 2, startSample: 6_000, window: Self.window(6_000, 30_000))
        #expect(fits)
        #expect(kept.sampleCount == 30_000)
        kept.removeAll()
        #expect(kept.sampleCount == 0 && kept.frames.isEmpty)
    }

    @Test func aSessionShedAtStrideFourEndsAsIfNothingWasShed() throws {
        // 8 s of two voices in one stretch of speech, shed at stride 4 but for every fourth frame. With
        // 10 s of allowance the 12 shed frames' windows one by one (1.5 s each, 18 s) would not all fit;
        // their union (about 8 s) does, so finalize embeds every frame and labels as without shedding.
        let meeting = silence(0.5) + tone(0, seconds: 4) + tone(1, seconds: 4) + silence(1)
        func finalSpeakers(stride: Int) throws -> (labels: [Int32?], embedded: Int) {
            var config = DiarizerConfig.default
            config.shedRetentionSeconds = 10
            let diarizer = try StreamingDiarizerTests().makeDiarizer(config: config)
            diarizer.embeddingStride = stride
            var state: [UInt64: DiarizerTurn] = [:]
            for chunk in Swift.stride(from: 0, to: meeting.count, by: 1600) {
                try diarizer.push(Array(meeting[chunk ..< min(meeting.count, chunk + 1600)]))
                StreamingDiarizerTests().apply(diarizer.pullTurns(), to: &state)
            }
            try diarizer.finalize()
            StreamingDiarizerTests().apply(diarizer.pullTurns(), to: &state)
            let labels = Swift.stride(from: 0.75, to: 8.5, by: 0.5).map { StreamingDiarizerTests().speaker(at: $0, state) }
            return (labels, diarizer.embeddedFrameCount)
        }
        let unshed = try finalSpeakers(stride: 1), shed = try finalSpeakers(stride: 4)
        #expect(shed.embedded == unshed.embedded)
        #expect(shed.labels == unshed.labels)
        #expect(Set(shed.labels.compactMap { $0 }).count == 2)
    }
}
