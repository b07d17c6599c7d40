import Foundation
import Logging
import PluginHost
import SpeakerSyncAudio
import Testing
import TestSupport

/// speakerkit, dlopen'd, under a host that reports a backlog (ABI revision 5's `backlog_seconds`):
/// it embeds fewer frames while the host is behind, says so, labels the whole recording all the same,
/// and goes back to every frame once the host has caught up.
@Suite(.serialized) struct SpeakerKitLoadSheddingTests {
    static func recording() throws -> [Float] {
        let file = try #require(TestData.file("sample/sample.wav"), "SPEAKERSYNC_TEST_DATA must point at the shared data")
        return try WAVFile.read(contentsOf: file).samples
    }

    /// Pushes `audio` in 100 ms chunks, reporting `backlog(start)` before each; the final turns and the
    /// plugin's log.
    static func run(backlog: (Double) -> Double) throws -> (turns: [ProviderTurn], log: [String]) {
        let log = CapturedLog()
        let registry = try TestPlugins.freshRegistry("speakersync-speakerkit", configuration: ProviderConfiguration(sections: [:]),
                                                     logger: log.logger(level: .info))
        let instance = try registry.makeInstance(providerID: "speakerkit", sessionID: "shedding", optionsJSON: "")
        let audio = try recording()
        var turns: [UInt64: ProviderTurn] = [:]
        func apply(_ pulled: [ProviderTurn]) {
            for turn in pulled { turns[turn.turnID] = turn.isRemoved ? nil : turn }
        }
        for start in stride(from: 0, to: audio.count, by: 1_600) {
            registry.noteBacklog(seconds: backlog(Double(start) / 16_000))
            try instance.push(samples: Array(audio[start ..< min(audio.count, start + 1_600)]))
            apply(try instance.pullTurns())
        }
        registry.noteBacklog(seconds: 0)
        apply(try instance.finalize())
        return (Array(turns.values), log.lines.map(\.message))
    }

    @Test func aHostThatFallsBehindGetsLabelsForAllTheSpeechFromFewerEmbeddingsAndThenEveryFrameAgain() throws {
        let audio = try Self.recording()
        let seconds = Double(audio.count) / 16_000
        // Behind by 3 s in the first half, caught up in the second.
        let shed = try Self.run { $0 < seconds / 2 ? 3 : 0 }
        let full = try Self.run { _ in 0 }
        // 3 s behind is past the last step (one frame in eight); back down a step at a time.
        #expect(shed.log.contains { $0.contains("behind: embedding fewer frames") && $0.contains("embedding_stride=8") }, "\(shed.log)")
        #expect(shed.log.contains { $0.contains("catching up: embedding more frames") && $0.contains("embedding_stride=4") })
        #expect(shed.log.contains { $0.contains("catching up: embedding more frames") && $0.contains("embedding_stride=2") })
        #expect(shed.log.contains { $0.contains("catching up: embedding more frames") && $0.contains("embedding_stride=1") })
        #expect(!full.log.contains { $0.contains("embedding fewer frames") })
        // Everything the full run labels, the shedding run labels too (to within a frame per turn edge).
        func covered(_ turns: [ProviderTurn]) -> Double { turns.map { $0.endSeconds - $0.startSeconds }.reduce(0, +) }
        #expect(covered(full.turns) > seconds / 2)
        #expect(abs(covered(shed.turns) - covered(full.turns)) <= 0.5 * Double(max(full.turns.count, shed.turns.count)),
                "labelled \(covered(shed.turns)) s against \(covered(full.turns)) s")
        #expect(Set(shed.turns.map(\.speaker)).count >= 2)
    }
}
