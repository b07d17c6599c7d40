import Testing
import TranscriptMerge
import DeterministicRandom

/// A random meeting: results (some revised later) and turns (some revised or removed later).
struct RandomScenario {
    enum Event {
        case result(id: String, words: [Word], isFinal: Bool)
        case turns([SpeakerTurn])
        case removeTurns([String])
        case mergeSpeaker(from: String, into: String)
    }

    var events: [Event] = []

    init(seed: UInt64, words wordCount: Int, turns turnCount: Int, withMerges: Bool = false) {
        var random = SeededRandom(seed: seed)
        let speakers = ["S1", "S2", "S3"]
        // Times on a 0.1 s grid so that ties, touching spans and zero-length words occur.
        func time(_ upper: Double) -> Double { Double(Int.random(in: 0...Int(upper * 10), using: &random)) / 10 }
        let span = Double(wordCount) * 0.4 + 2
        var resultIndex = 0
        var remaining = wordCount
        while remaining > 0 {
            let size = min(remaining, Int.random(in: 1...4, using: &random))
            remaining -= size
            let start = time(span)
            let words = (0..<size).map { i -> Word in
                let s = start + Double(i) * 0.3 + time(0.2)
                return Word(text: "w\(resultIndex)_\(i)", startSeconds: s, endSeconds: s + time(0.4))
            }
            let id = "r\(resultIndex)"
            events.append(.result(id: id, words: words, isFinal: false))
            if Bool.random(using: &random) {
                // Volatile → final with a different number of words and shifted times.
                let finalSize = max(0, size + Int.random(in: -1...1, using: &random))
                let revised = (0..<finalSize).map { i -> Word in
                    let s = start + Double(i) * 0.35
                    return Word(text: "f\(resultIndex)_\(i)", startSeconds: s, endSeconds: s + 0.25, confidence: 0.8)
                }
                events.append(.result(id: id, words: revised, isFinal: true))
            }
            resultIndex += 1
        }
        var turnIDs: [String] = []
        for index in 0..<turnCount {
            let start = time(span)
            let turn = SpeakerTurn(
                id: "t\(index)", speaker: speakers.randomElement(using: &random)!, startSeconds: start,
                endSeconds: start + time(3), confidence: Bool.random(using: &random) ? nil : time(1))
            events.append(.turns([turn]))
            turnIDs.append(turn.id)
            if Int.random(in: 0..<4, using: &random) == 0 {
                var revised = turn
                revised.speaker = speakers.randomElement(using: &random)!
                revised.endSeconds = revised.startSeconds + time(2)
                events.append(.turns([revised]))
            }
        }
        events.shuffle(using: &random)
        // Removals go last so they refer to turns that exist (or were already removed: ignored).
        for id in turnIDs where Int.random(in: 0..<8, using: &random) == 0 { events.append(.removeTurns([id])) }
        if withMerges {
            // A live correction somewhere in the middle; turns arriving after it still use the old name.
            let at = Int.random(in: 0...events.count, using: &random)
            events.insert(.mergeSpeaker(from: "S3", into: "S1"), at: at)
        }
    }

    /// Applies the events one by one, checking every delta against a mirror of the transcript.
    func runIncremental(into merger: inout TranscriptMerger) -> DeltaMirror {
        var mirror = DeltaMirror()
        for event in events {
            switch event {
            case let .result(id, words, isFinal): mirror.apply(merger.upsertResult(id: id, words: words, isFinal: isFinal))
            case let .turns(turns): mirror.apply(merger.upsertTurns(turns))
            case let .removeTurns(ids): mirror.apply(merger.removeTurns(ids: ids))
            case let .mergeSpeaker(from, into): mirror.apply(merger.mergeSpeaker(from, into: into))
            }
        }
        return mirror
    }

    /// The final state, as `apply` wants it (later events win).
    var finalState: (results: [(id: String, words: [Word], isFinal: Bool)], turns: [SpeakerTurn]) {
        var results: [String: (words: [Word], isFinal: Bool)] = [:]
        var turns: [String: SpeakerTurn] = [:]
        for event in events {
            switch event {
            case let .result(id, words, isFinal): results[id] = (words, isFinal)
            case let .turns(list): for turn in list { turns[turn.id] = turn }
            case let .removeTurns(ids): for id in ids { turns[id] = nil }
            case .mergeSpeaker: break
            }
        }
        return (results.map { ($0.key, $0.value.words, $0.value.isFinal) }, Array(turns.values))
    }
}

@Suite struct PropertyTests {
    /// Sparse (60 words, 25 turns) and crowded (150 words on the same span, 60 turns) meetings, half of them
    /// with a speaker merge in the middle.
    @Test(arguments: 0..<60 as Range<UInt64>)
    func randomUpdatesNeverDropWordsAndDeltasAreExact(seed: UInt64) {
        let crowded = seed % 3 == 2
        let scenario = RandomScenario(
            seed: seed, words: crowded ? 150 : 60, turns: crowded ? 60 : 25, withMerges: seed % 2 == 1)
        var merger = TranscriptMerger()
        let mirror = scenario.runIncremental(into: &merger)

        // Every live word appears exactly once across utterances.
        let expected = scenario.finalState.results.flatMap { result in
            result.words.indices.map { WordID(result.id, $0) }
        }
        let grouped = merger.utterances.flatMap(\.words).map(\.id)
        #expect(grouped.count == expected.count)
        #expect(Set(grouped) == Set(expected))
        #expect(Set(grouped).count == grouped.count)
        let ids = merger.utterances.map(\.id)
        #expect(Set(ids).count == ids.count, "utterance ids are unique")
        #expect(merger.unlabelledWordCount == merger.words.filter { $0.speaker == nil }.count)

        // Applying every delta reproduces the transcript exactly, and no delta carried an unchanged entry.
        let deltasReproduceTranscript = mirror.matches(merger)
        #expect(deltasReproduceTranscript)
        #expect(mirror.redundant.isEmpty, "\(mirror.redundant.prefix(5))")

        // Incremental equals batch: same labels and grouping.
        var batch = TranscriptMerger()
        let state = scenario.finalState
        _ = batch.apply(results: state.results, turns: state.turns)
        for case let .mergeSpeaker(from, into) in scenario.events { _ = batch.mergeSpeaker(from, into: into) }
        #expect(shapes(merger) == shapes(batch))
    }

    /// The same with utterances capped at 3 words (the cap a run of one speaker meets): grouping stays
    /// a left-to-right rule, so updating a region still agrees with grouping everything at once.
    @Test(arguments: 0..<30 as Range<UInt64>)
    func cappedUtterancesStayExactAndIncrementalEqualsBatch(seed: UInt64) {
        let config = MergeConfig(maxUtteranceWords: 3)
        let scenario = RandomScenario(seed: 1_000 + seed, words: seed % 2 == 0 ? 150 : 60, turns: 25, withMerges: seed % 3 == 0)
        var merger = TranscriptMerger(config: config)
        let mirror = scenario.runIncremental(into: &merger)
        #expect(merger.utterances.allSatisfy { $0.words.count <= 3 })
        #expect(mirror.matches(merger))
        #expect(mirror.redundant.isEmpty, "\(mirror.redundant.prefix(5))")
        var batch = TranscriptMerger(config: config)
        let state = scenario.finalState
        _ = batch.apply(results: state.results, turns: state.turns)
        for case let .mergeSpeaker(from, into) in scenario.events { _ = batch.mergeSpeaker(from, into: into) }
        #expect(shapes(merger) == shapes(batch))
    }

    @Test func arrivalOrderDoesNotMatter() {
        let scenario = RandomScenario(seed: 99, words: 80, turns: 30)
        let state = scenario.finalState
        var reference: [UtteranceShape]?
        var random = SeededRandom(seed: 7)
        for _ in 0..<6 {
            var events: [RandomScenario.Event] = state.results.map { .result(id: $0.id, words: $0.words, isFinal: $0.isFinal) }
            events += state.turns.map { .turns([$0]) }
            events.shuffle(using: &random)
            var merger = TranscriptMerger()
            _ = RandomScenario(events: events).runIncremental(into: &merger)
            let result = shapes(merger)
            if let reference { #expect(result == reference) } else { reference = result }
        }
        #expect((reference?.count ?? 0) > 1)
    }

    @Test func incrementalInTimeOrderEqualsBatch() {
        // Words and turns arriving in audio order, turns a second late, as a live provider would.
        var random = SeededRandom(seed: 3)
        var turns: [SpeakerTurn] = []
        var t = 0.0
        for index in 0..<40 {
            let length = Double(Int.random(in: 5...40, using: &random)) / 10
            turns.append(turn("t\(index)", ["A", "B", "C"].randomElement(using: &random)!, t, t + length))
            t += length + Double(Int.random(in: -3...8, using: &random)) / 10
        }
        var words: [Word] = []
        var w = 0.0
        while w < t {
            let length = Double(Int.random(in: 1...5, using: &random)) / 10
            words.append(word("x\(words.count)", w, w + length))
            w += length + Double(Int.random(in: 0...12, using: &random)) / 10
        }
        var incremental = TranscriptMerger()
        var mirror = DeltaMirror()
        var nextWord = 0
        var nextTurn = 0
        var slice = 0
        var clock = 0.0
        while nextWord < words.count || nextTurn < turns.count {
            clock += 0.1
            var sliceWords: [Word] = []
            while nextWord < words.count && words[nextWord].endSeconds <= clock {
                sliceWords.append(words[nextWord]); nextWord += 1
            }
            var sliceTurns: [SpeakerTurn] = []
            while nextTurn < turns.count && turns[nextTurn].endSeconds + 1 <= clock {
                sliceTurns.append(turns[nextTurn]); nextTurn += 1
            }
            if !sliceWords.isEmpty {
                mirror.apply(incremental.upsertResult(id: "s\(slice)", words: sliceWords, isFinal: true))
            }
            if !sliceTurns.isEmpty { mirror.apply(incremental.upsertTurns(sliceTurns)) }
            slice += 1
        }
        var batch = TranscriptMerger()
        var sliceResults: [(id: String, words: [Word], isFinal: Bool)] = []
        for id in Set(incremental.words.map(\.id.resultID)) {
            let sliceWords = incremental.words.filter { $0.id.resultID == id }.sorted { $0.id < $1.id }
                .map { Word(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, confidence: $0.confidence) }
            sliceResults.append((id, sliceWords, true))
        }
        let batchDelta = batch.apply(results: sliceResults, turns: turns)
        #expect(batchDelta.changedWords.count == words.count)
        #expect(shapes(incremental) == shapes(batch))
        #expect(incremental.words.count == words.count)
        let deltasReproduceTranscript = mirror.matches(incremental)
        #expect(deltasReproduceTranscript)
        #expect(mirror.redundant.isEmpty)
    }
}

extension RandomScenario {
    init(events: [Event]) { self.events = events }
}
