import Foundation
import Testing
@testable import StreamingDiarization

@Suite struct LoudnessTrackTests {
    func track(_ audio: [Float]) -> LoudnessTrack {
        var track = LoudnessTrack(sampleRate: 16_000)
        // Uneven chunks: blocks must not depend on how the audio was cut.
        var start = 0, size = 37
        while start < audio.count {
            track.append(Array(audio[start ..< min(audio.count, start + size)]))
            start += size
            size = size * 7 % 1601 + 1
        }
        return track
    }

    @Test func oneBytePerTenMillisecondsAtTheSignalsLevel() {
        let loudness = track(tone(0, seconds: 1) + silence(0.5))
        #expect(loudness.blocks.count == 150)
        // A sine of amplitude 0.4 has mean square 0.08: −11 dB, stored as 109.
        #expect(loudness.blocks[10 ..< 100].allSatisfy { abs(Int($0) - 109) <= 1 })
        #expect(loudness.blocks[101...].allSatisfy { $0 == 0 })
    }

    @Test func findsThePauseBetweenTwoVoices() throws {
        let loudness = track(tone(0, seconds: 1) + silence(0.4) + tone(1, seconds: 1))
        let pause = try #require(loudness.pause(near: 1.1, radiusSeconds: 0.75, minimumSeconds: 0.25, dropDecibels: 25))
        #expect(abs(pause.startSeconds - 1.0) <= 0.01)
        #expect(abs(pause.endSeconds - 1.4) <= 0.01)
        // Too short, too shallow, or out of reach: none.
        #expect(loudness.pause(near: 1.1, radiusSeconds: 0.75, minimumSeconds: 0.5, dropDecibels: 25) == nil)
        #expect(loudness.pause(near: 2.2, radiusSeconds: 0.3, minimumSeconds: 0.25, dropDecibels: 25) == nil)
        let murmur = track(tone(0, seconds: 1) + tone(1, seconds: 0.4).map { $0 * 0.2 } + tone(1, seconds: 1))
        #expect(murmur.pause(near: 1.1, radiusSeconds: 0.75, minimumSeconds: 0.25, dropDecibels: 25) == nil)
        #expect(track(tone(0, seconds: 3)).pause(near: 1.5, radiusSeconds: 0.75, minimumSeconds: 0.1, dropDecibels: 25) == nil)
    }

    @Test func listsEveryPauseAndAgreesWithTheSearchNearAPoint() throws {
        // Pauses of 0.4 s and 0.6 s between voices, a 0.1 s gap too short to count, a quiet murmur that is no pause.
        let audio = tone(0, seconds: 1) + silence(0.4) + tone(1, seconds: 1) + silence(0.1) + tone(0, seconds: 1)
            + tone(1, seconds: 0.5).map { $0 * 0.2 } + tone(1, seconds: 1) + silence(0.6) + tone(0, seconds: 1)
        let loudness = track(audio)
        let pauses = loudness.pauses(minimumSeconds: 0.25, dropDecibels: 25, contextSeconds: 1)
        #expect(pauses.count == 2)
        let expected = [(1.0, 1.4), (5.0, 5.6)]
        for (pause, (start, end)) in zip(pauses, expected) {
            #expect(abs(pause.startSeconds - start) <= 0.01 && abs(pause.endSeconds - end) <= 0.01, "\(pause)")
            let near = try #require(loudness.pause(near: (start + end) / 2, radiusSeconds: 0.5, minimumSeconds: 0.25, dropDecibels: 25))
            #expect(abs(near.startSeconds - pause.startSeconds) <= 0.01 && abs(near.endSeconds - pause.endSeconds) <= 0.01)
        }
        #expect(loudness.pauses(minimumSeconds: 0.5, dropDecibels: 25, contextSeconds: 1).count == 1)
        #expect(track(tone(0, seconds: 3)).pauses(minimumSeconds: 0.1, dropDecibels: 25, contextSeconds: 1).isEmpty)
        #expect(LoudnessTrack(sampleRate: 16_000).pauses(minimumSeconds: 0.25, dropDecibels: 25, contextSeconds: 1).isEmpty)
    }
}
