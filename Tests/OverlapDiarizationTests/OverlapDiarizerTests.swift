import Logging
import OverlapDiarization
import StreamingDiarization
import Testing

/// The pipeline on scripted models (`ScriptedModels.swift`): identities across windows, overlap kept
/// as simultaneous turns, live turns within a step, the final revision one to one.
@Suite struct OverlapDiarizerTests {
    static func run(_ audio: [Float], config: OverlapDiarizerConfig = .default, hint: SpeakerCountHint = .none,
                    chunkSeconds: Double = 0.1) throws -> (live: [DiarizerTurn], final: [DiarizerTurn], diarizer: OverlapDiarizer) {
        let diarizer = OverlapDiarizer(config: config, hint: hint, segmenter: ScriptedSegmenter(), embedder: ScriptedEmbedder(),
                                       logger: Logger(label: "test"))
        var turns: [UInt64: DiarizerTurn] = [:]
        let chunk = Int(chunkSeconds * 16_000)
        for start in stride(from: 0, to: audio.count, by: chunk) {
            try diarizer.push(Array(audio[start ..< min(audio.count, start + chunk)]))
            for turn in diarizer.pullTurns() { turns[turn.id] = turn.isRemoved ? nil : turn }
        }
        let live = turns.values.sorted { $0.startSeconds < $1.startSeconds }
        try diarizer.finalize()
        for turn in diarizer.pullTurns() { turns[turn.id] = turn.isRemoved ? nil : turn }
        return (live, turns.values.sorted { $0.startSeconds < $1.startSeconds }, diarizer)
    }

    /// Seconds during which `speaker` has a turn, within `range`.
    static func seconds(of speaker: Int32, in turns: [DiarizerTurn], _ range: ClosedRange<Double>) -> Double {
        turns.filter { $0.speaker == speaker }.reduce(0) { sum, turn in
            sum + max(0, min(turn.endSeconds, range.upperBound) - max(turn.startSeconds, range.lowerBound))
        }
    }

    static func speaker(at seconds: Double, in turns: [DiarizerTurn]) -> Set<Int32> {
        Set(turns.filter { $0.startSeconds <= seconds && seconds < $0.endSeconds }.map(\.speaker))
    }

    @Test func voicesKeepOneLabelEachAcrossWindows() throws {
        // A B A C B, 3 s each, a short pause between.
        let audio = meeting([(1, 3), (0, 0.3), (2, 3), (0, 0.3), (1, 3), (0, 0.3), (4, 3), (0, 0.3), (2, 3)])
        let (live, final, _) = try Self.run(audio)
        for turns in [live, final] {
            let a = Self.speaker(at: 1.5, in: turns), b = Self.speaker(at: 4.8, in: turns)
            let c = Self.speaker(at: 11.4, in: turns)
            #expect(a.count == 1 && b.count == 1 && c.count == 1)
            #expect(Set([a, b, c].map { $0.first! }).count == 3)
            #expect(Self.speaker(at: 8.1, in: turns) == a)
            #expect(Self.speaker(at: 14.7, in: turns) == b)
        }
        #expect(Set(final.map(\.speaker)).count == 3)
    }

    /// Two voices at once: both have a turn over the overlap, live and final.
    @Test func overlapBecomesSimultaneousTurns() throws {
        let audio = meeting([(1, 4), (3, 2), (2, 4)])
        let (live, final, _) = try Self.run(audio)
        for turns in [live, final] {
            let a = Self.speaker(at: 2, in: turns), b = Self.speaker(at: 8, in: turns)
            #expect(a.count == 1 && b.count == 1 && a != b)
            #expect(Self.speaker(at: 5, in: turns) == a.union(b))
        }
    }

    /// Live turns reach the audio's end within a step; finalize covers what the last step left.
    @Test func liveTurnsFollowWithinAStep() throws {
        let config = OverlapDiarizerConfig.default
        let diarizer = OverlapDiarizer(config: config, segmenter: ScriptedSegmenter(), embedder: ScriptedEmbedder(), logger: Logger(label: "test"))
        let audio = meeting([(1, 6.55)])
        var latest = 0.0
        for start in stride(from: 0, to: audio.count, by: 1_600) {
            try diarizer.push(Array(audio[start ..< min(audio.count, start + 1_600)]))
            latest = max(latest, diarizer.pullTurns().map(\.endSeconds).max() ?? 0)
            let heard = Double(min(audio.count, start + 1_600)) / 16_000
            if heard > 1.5 { #expect(heard - latest <= config.stepSeconds + 0.05, "at \(heard) s the turns end at \(latest) s") }
        }
        try diarizer.finalize()
        let final = diarizer.pullTurns().filter { !$0.isRemoved }
        #expect(abs((final.map(\.endSeconds).max() ?? 0) - 6.55) < 0.1)
    }

    /// A count hint holds at finalize: four voices asked to be two become two.
    @Test func anExactCountHintIsKept() throws {
        let audio = meeting([(1, 3), (2, 3), (4, 3), (8, 3)])
        let (_, final, _) = try Self.run(audio, hint: SpeakerCountHint(exact: 2))
        #expect(Set(final.map(\.speaker)).count == 2)
    }

    /// Profiles: every final speaker has a voice in the embedding space, for the next session to know.
    @Test func everyFinalSpeakerHasAProfile() throws {
        let audio = meeting([(1, 3), (2, 3), (1, 3)])
        let (_, final, diarizer) = try Self.run(audio)
        for speaker in Set(final.map(\.speaker)) {
            let profile = try #require(diarizer.profile(of: speaker))
            #expect(profile.embedding.count == 8)
            #expect(profile.seconds > 0)
        }
    }
}
