import Testing
import TranscriptMerge

/// Words that overlap in time were said by different people (`TranscriptMerger+SimultaneousWords`).
@Suite struct SimultaneousWordsTests {
    /// A speaks a0…a3; B joins during a2 and carries on. Speaker of each word, in time order.
    static let handover: [(text: String, start: Double, end: Double, speaker: String)] = [
        ("a0", 0.0, 0.4, "A"), ("a1", 0.5, 0.9, "A"), ("a2", 1.0, 1.4, "A"), ("b0", 1.3, 1.7, "B"),
        ("a3", 1.5, 1.9, "A"), ("b1", 1.8, 2.2, "B"), ("b2", 2.3, 2.7, "B"), ("b3", 2.8, 3.2, "B"),
    ]

    /// The turns of a provider that reports one speaker at a time (switching inside the overlap) and of
    /// one that reports the overlap itself (as the reference does).
    static let hypotheses: [[SpeakerTurn]] = [
        [turn("t1", "A", 0, 1.6), turn("t2", "B", 1.6, 3.2)],
        [turn("t1", "A", 0, 1.9), turn("t2", "B", 1.3, 3.2)],
    ]

    /// The script's words as one result, merged in one batch with `turns`.
    static func merged(
        _ script: [(text: String, start: Double, end: Double, speaker: String)], turns: [SpeakerTurn],
        config: MergeConfig = .default
    ) -> TranscriptMerger {
        var merger = TranscriptMerger(config: config)
        _ = merger.apply(results: [("r", script.map { word($0.text, $0.start, $0.end) }, true)], turns: turns)
        return merger
    }

    static func labels(
        _ script: [(text: String, start: Double, end: Double, speaker: String)], turns: [SpeakerTurn],
        config: MergeConfig = .default
    ) -> [String: String?] {
        var labels: [String: String?] = [:]
        for word in merged(script, turns: turns, config: config).words { labels[word.text] = word.speaker }
        return labels
    }

    static let off = MergeConfig(simultaneousStretchSeconds: 0)

    @Test(arguments: 0..<2)
    func everyWordOfAnOverlappedHandoverGoesToItsSpeaker(hypothesis: Int) {
        let turns = Self.hypotheses[hypothesis]
        let labels = Self.labels(Self.handover, turns: turns)
        for entry in Self.handover { #expect(labels[entry.text] == entry.speaker, "\(entry.text)") }
        // By time alone, at least one overlapped word goes to the other person.
        let timeBased = Self.labels(Self.handover, turns: turns, config: Self.off)
        #expect(Self.handover.contains { timeBased[$0.text] != $0.speaker })
    }

    /// B's first word starts before A's last one; B goes on after. The voice that ends later is clearer
    /// here (0.15 s) than the voice that started earlier (0.05 s), so the stretch is read from its end.
    @Test func theClearerEndOfTheStretchDecides() {
        let script: [(text: String, start: Double, end: Double, speaker: String)] = [
            ("a0", 0.0, 0.4, "A"), ("a1", 0.5, 1.0, "A"), ("b0", 1.05, 1.35, "B"), ("a2", 1.1, 1.6, "A"),
            ("b1", 1.4, 1.75, "B"), ("b2", 1.9, 2.3, "B"), ("b3", 2.4, 2.8, "B"),
        ]
        let turns = [turn("t1", "A", 0, 1.4), turn("t2", "B", 1.4, 2.8)]
        let labels = Self.labels(script, turns: turns)
        for entry in script { #expect(labels[entry.text] == entry.speaker, "\(entry.text)") }
        #expect(Self.labels(script, turns: turns, config: Self.off)["b0"] == "A")
    }

    @Test func aSpeakerTheTurnsNeverShowIsNotInvented() {
        // B says "yes" over A's a2, but no turn of B exists: the words keep their time-based labels.
        let script: [(text: String, start: Double, end: Double, speaker: String)] = [
            ("a1", 0.5, 0.9, "A"), ("a2", 1.0, 1.4, "A"), ("yes", 1.2, 1.5, "B"), ("a3", 1.6, 2.0, "A"),
        ]
        let merger = Self.merged(script, turns: [turn("t", "A", 0, 3)])
        let timeBased = Self.merged(script, turns: [turn("t", "A", 0, 3)], config: Self.off)
        #expect(merger.words.allSatisfy { $0.speaker == "A" })
        #expect(merger.words.map(WordShape.init) == timeBased.words.map(WordShape.init))
    }

    @Test func aStretchWithoutAWordOnBothSidesIsLeftToTheTurns() {
        // Nothing within a second before the stretch: the handover without a0 and a1.
        let script = Array(Self.handover.dropFirst(2))
        for turns in Self.hypotheses {
            #expect(Self.labels(script, turns: turns) == Self.labels(script, turns: turns, config: Self.off))
        }
        // Nothing after it either way.
        let cut = Array(Self.handover.prefix(6))
        #expect(Self.labels(cut, turns: Self.hypotheses[0]) == Self.labels(cut, turns: Self.hypotheses[0], config: Self.off))
    }

    @Test func threeVoicesAtOnceAndOverlongStretchesAreLeftToTheTurns() {
        let turns = Self.hypotheses[0]
        let timeBased = Self.labels(Self.handover, turns: turns, config: Self.off)
        // The handover stretch runs 1.0…2.2 s: longer than a 1 s limit.
        #expect(Self.labels(Self.handover, turns: turns, config: MergeConfig(simultaneousStretchSeconds: 1)) == timeBased)
        // A third word across b0 and a3 makes three voices at once.
        var crowded = Self.handover
        crowded.append(("c0", 1.45, 1.65, "C"))
        #expect(Self.labels(crowded, turns: turns) == Self.labels(crowded, turns: turns, config: Self.off))
    }

    @Test func aWordMovedByItsNeighboursHasConfidenceOneHalf() {
        let merger = Self.merged(Self.handover, turns: Self.hypotheses[0])
        let timeBased = Self.merged(Self.handover, turns: Self.hypotheses[0], config: Self.off)
        var moved = 0
        for (ruled, plain) in zip(merger.words, timeBased.words) {
            if ruled.speaker == plain.speaker {
                #expect(ruled.speakerConfidence == plain.speakerConfidence)
            } else {
                moved += 1
                #expect(ruled.speakerConfidence == 0.5)
            }
        }
        #expect(moved == 2)
    }

    /// Live order: each word on its own result as it ends, the turns a second later, even revised.
    @Test func liveArrivalEqualsBatch() {
        var live = TranscriptMerger()
        var mirror = DeltaMirror()
        for (index, entry) in Self.handover.enumerated() {
            mirror.apply(live.upsertResult(id: "r\(index)", words: [word(entry.text, entry.start, entry.end)], isFinal: true))
            if index == 3 { mirror.apply(live.upsertTurns([turn("t1", "A", 0, 1.2)])) }
        }
        mirror.apply(live.upsertTurns(Self.hypotheses[0]))
        var batch = TranscriptMerger()
        _ = batch.apply(
            results: Self.handover.enumerated().map { ("r\($0.offset)", [word($0.element.text, $0.element.start, $0.element.end)], true) },
            turns: Self.hypotheses[0])
        #expect(shapes(live) == shapes(batch))
        #expect(live.words.map(\.speaker) == Self.handover.map(\.speaker))
        let deltasReproduceTranscript = mirror.matches(live)
        #expect(deltasReproduceTranscript)
        #expect(mirror.redundant.isEmpty)
    }

    @Test func restoredTranscriptKeepsApplyingTheRule() {
        // Stored before the turns changed: every word labelled A.
        let first = Self.merged(Self.handover, turns: [turn("t1", "A", 0, 3.2)])
        var restored = TranscriptMerger()
        restored.restore(words: first.words, turns: first.turns)
        _ = restored.upsertTurns(Self.hypotheses[0])
        #expect(restored.words.map(\.speaker) == Self.handover.map(\.speaker))
    }

    /// The random scenarios of `PropertyTests` (incremental equals batch, exact deltas) run with the rule
    /// on; this shows they do exercise it.
    @Test func randomScenariosContainSimultaneousStretches() {
        var differing = 0
        for seed in 0..<20 as Range<UInt64> {
            let state = RandomScenario(seed: seed, words: 60, turns: 25).finalState
            var ruled = TranscriptMerger()
            _ = ruled.apply(results: state.results, turns: state.turns)
            var plain = TranscriptMerger(config: Self.off)
            _ = plain.apply(results: state.results, turns: state.turns)
            if ruled.words.map(\.speaker) != plain.words.map(\.speaker) { differing += 1 }
        }
        #expect(differing > 0)
    }
}
