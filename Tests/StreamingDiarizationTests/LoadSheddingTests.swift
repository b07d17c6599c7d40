import Logging
import SpeakerManager
import Testing
@testable import StreamingDiarization

@Suite struct LoadSheddingTests {
    @Test func escalatesAtOnceAndRecoversOneStepAtATimeAfterACalmStretch() {
        var shedding = LoadShedding(config: .init(steps: [(1.0, 2), (2.5, 4)], recoveredBacklogSeconds: 0.3, recoverAfterSeconds: 2))
        #expect(shedding.update(backlogSeconds: 0.2, audioSeconds: 0.1) == 1)
        #expect(shedding.update(backlogSeconds: 0.9, audioSeconds: 0.1) == 1)
        #expect(shedding.update(backlogSeconds: 1.2, audioSeconds: 0.1) == 2)
        #expect(shedding.update(backlogSeconds: 3.0, audioSeconds: 0.1) == 4)
        // Draining but not yet caught up: the stride holds.
        #expect(shedding.update(backlogSeconds: 0.8, audioSeconds: 0.1) == 4)
        // Caught up: 2 s of calm audio per step down.
        for _ in 0 ..< 19 { #expect(shedding.update(backlogSeconds: 0.1, audioSeconds: 0.1) == 4) }
        #expect(shedding.update(backlogSeconds: 0.1, audioSeconds: 0.1) == 2)
        // A wait in between restarts the calm count.
        #expect(shedding.update(backlogSeconds: 0.5, audioSeconds: 0.1) == 2)
        for _ in 0 ..< 19 { #expect(shedding.update(backlogSeconds: 0.0, audioSeconds: 0.1) == 2) }
        #expect(shedding.update(backlogSeconds: 0.0, audioSeconds: 0.1) == 1)
    }

    /// The default steps up through wider strides as the wait grows, and only a wait below the first
    /// step counts as caught up (else a stride could step down while the host is still behind).
    @Test func theDefaultStepsWidenWithTheWaitAndRecoverBelowTheFirstStep() {
        let config = LoadShedding.Config.default
        #expect(config.steps.map(\.stride) == config.steps.map(\.stride).sorted())
        #expect(config.steps.map(\.backlogSeconds) == config.steps.map(\.backlogSeconds).sorted())
        #expect(config.recoveredBacklogSeconds < config.steps[0].backlogSeconds)
        var shedding = LoadShedding()
        #expect(shedding.update(backlogSeconds: 0.01, audioSeconds: 0.1) == 1)
        #expect(shedding.update(backlogSeconds: 10, audioSeconds: 0.1) == config.steps.last!.stride)
    }

    /// Sessions of one worker read the same backlog; spread by their ids, the share of them shedding
    /// grows with it instead of jumping from none to all.
    @Test func sessionsSpreadByIdShedOneAfterAnotherAsTheBacklogGrows() {
        let spreads = (0 ..< 200).map { LoadShedding.spread(forSessionID: "session-\($0)") }
        #expect(spreads.allSatisfy { $0 >= 0 && $0 < 1 })
        #expect(LoadShedding.spread(forSessionID: "a") == LoadShedding.spread(forSessionID: "a"))
        // Roughly uniform: each quarter holds a fair share.
        for quarter in 0 ..< 4 {
            let count = spreads.filter { Int($0 * 4) == quarter }.count
            #expect(count > 30 && count < 70, "quarter \(quarter): \(count) of 200")
        }
        let first = LoadShedding.Config.default.steps[0].backlogSeconds
        func shedding(at backlog: Double) -> Int {
            spreads.filter { spread in
                var shedding = LoadShedding(spread: spread)
                return shedding.update(backlogSeconds: backlog, audioSeconds: 0.1) > 1
            }.count
        }
        let shares = [0.4, 0.7, 1.0, 1.3, 1.6].map { shedding(at: first * $0) }
        #expect(shares.first == 0 && shares.last == 200)
        #expect(shares == shares.sorted())
        #expect(shares[2] > 60 && shares[2] < 140, "about half shed at the configured first step: \(shares)")
    }

    func run(embeddingStride: Int, retentionSeconds: Double = DiarizerConfig.default.shedRetentionSeconds) throws
        -> (turns: [DiarizerTurn], live: [DiarizerTurn], embeddedLive: Int, shed: Int) {
        var managerConfig = SpeakerManagerConfig.default
        managerConfig.speakerThreshold = 0.3
        managerConfig.minEmbeddingUpdateDurationSeconds = 1
        let logger = Logger(label: "load-shedding-test")
        var config = DiarizerConfig.default
        config.shedRetentionSeconds = retentionSeconds
        let diarizer = StreamingDiarizer(config: config, detector: LoudnessDetector(), embedder: ToneEmbedder(),
                                         speakers: try SpeakerManager(config: managerConfig, logger: logger), logger: logger)
        diarizer.embeddingStride = embeddingStride
        let meeting = silence(0.5) + tone(0, seconds: 4) + tone(1, seconds: 4) + silence(1) + tone(0, seconds: 3) + silence(1)
        var state: [UInt64: DiarizerTurn] = [:]
        for start in stride(from: 0, to: meeting.count, by: 1_600) {
            try diarizer.push(Array(meeting[start ..< min(meeting.count, start + 1_600)]))
            for turn in diarizer.pullTurns() { state[turn.id] = turn.isRemoved ? nil : turn }
        }
        let live = state.values.sorted { $0.startSeconds < $1.startSeconds }
        let embeddedLive = diarizer.embeddedFrameCount
        try diarizer.finalize()
        for turn in diarizer.pullTurns() { state[turn.id] = turn.isRemoved ? nil : turn }
        return (state.values.sorted { $0.startSeconds < $1.startSeconds }, live, embeddedLive, diarizer.shedFrameCount)
    }

    func speakers(_ turns: [DiarizerTurn]) -> [Int32] { turns.map(\.speaker).reduce(into: []) { if $0.last != $1 { $0.append($1) } } }
    func covered(_ turns: [DiarizerTurn]) -> Double { turns.map { $0.endSeconds - $0.startSeconds }.reduce(0, +) }

    @Test func aWiderStrideEmbedsFewerFramesLiveAndStillLabelsEverySpeakerAndStretch() throws {
        let full = try run(embeddingStride: 1)
        let thinned = try run(embeddingStride: 2)
        #expect(full.shed == 0)
        #expect(thinned.shed > 0)
        #expect(thinned.embeddedLive < full.embeddedLive * 2 / 3)
        #expect(thinned.embeddedLive + thinned.shed >= full.embeddedLive)
        // Live: the same people in the same order, covering the same speech (within a frame at each change).
        #expect(speakers(thinned.live) == speakers(full.live))
        #expect(speakers(full.live).count == 3)
        #expect(abs(covered(thinned.live) - covered(full.live)) < 0.6)
    }

    /// Finalize embeds the kept windows of shed frames, so the final labels are the unshed ones.
    @Test func finalizeEmbedsTheShedFramesSoTheFinalLabelsAreAsWithoutShedding() throws {
        let full = try run(embeddingStride: 1)
        let thinned = try run(embeddingStride: 4)
        #expect(thinned.shed > 0)
        #expect(speakers(thinned.turns) == speakers(full.turns))
        #expect(zip(thinned.turns, full.turns).allSatisfy { abs($0.startSeconds - $1.startSeconds) < 0.01 && abs($0.endSeconds - $1.endSeconds) < 0.01 })
        #expect(thinned.turns.count == full.turns.count)
        // With nothing kept the final labels come from the live ones: still every stretch of speech.
        let unkept = try run(embeddingStride: 4, retentionSeconds: 0)
        #expect(abs(covered(unkept.turns) - covered(full.turns)) < 0.6)
    }
}
