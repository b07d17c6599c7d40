import MeetingSynth
import SpeakerSyncClient
import TranscriptMerge
import DeterministicRandom

/// Transcript-merge benchmark: `words` ASR words against `turns` speaker turns on one synthetic timeline,
/// (a) in one batch `apply`, (b) arriving in `incrementSeconds` slices of audio time like a live session:
/// each slice's words as one final ASR result, and each turn once the audio is 1 s past its end (providers
/// emit turns late). Everything is generated from a fixed seed. Returns the figures as text; asserts nothing.
func runMergeBenchmark(words wordCount: Int, turns turnCount: Int, incrementSeconds: Double,
                       simultaneousFraction: Double = 0) -> String {
    let data = MergeBenchmarkData(words: wordCount, turns: turnCount, seed: 0x5EED,
                                  simultaneousFraction: simultaneousFraction)
    let increment = incrementSeconds > 0 && incrementSeconds.isFinite ? incrementSeconds : 0.1
    let clock = ContinuousClock()
    var lines: [String] = []
    lines.append("merge benchmark: \(data.words.count) words, \(data.turns.count) turns, "
        + "\(format(data.audioSeconds / 3600, 1)) h of audio, tolerance 0.5 s, gap 1.0 s")

    // Slices: the words whose end falls in each increment, and the turns due then.
    let turnLatencySeconds = 1.0
    var slices: [(words: Range<Int>, turns: Range<Int>)] = []
    var nextWord = 0
    var nextTurn = 0
    var sliceEnd = increment
    while nextWord < data.words.count || nextTurn < data.turns.count {
        let wordStart = nextWord
        while nextWord < data.words.count && data.words[nextWord].endSeconds < sliceEnd { nextWord += 1 }
        let turnStart = nextTurn
        while nextTurn < data.turns.count && data.turns[nextTurn].endSeconds + turnLatencySeconds < sliceEnd {
            nextTurn += 1
        }
        if wordStart < nextWord || turnStart < nextTurn {
            slices.append((wordStart..<nextWord, turnStart..<nextTurn))
        }
        sliceEnd += increment
    }
    func resultID(_ slice: Int) -> String { "s\(slice)" }

    // (a) One batch.
    var batchResults: [(id: String, words: [Word], isFinal: Bool)] = []
    for (index, slice) in slices.enumerated() where !slice.words.isEmpty {
        batchResults.append((resultID(index), Array(data.words[slice.words]), true))
    }
    var batch = TranscriptMerger()
    var batchDelta = TranscriptDelta()
    let batchDuration = clock.measure {
        batchDelta = batch.apply(results: batchResults, turns: data.turns)
    }
    batchResults = []
    let batchSeconds = batchDuration.seconds
    lines.append("(a) batch apply: \(format(batchSeconds, 3)) s, "
        + "\(format(Double(data.words.count) / batchSeconds, 0)) words/s; delta: \(batchDelta.upserted.count) utterances, "
        + "\(batchDelta.changedWords.count) changed words; unlabelled \(batch.unlabelledWordCount)")
    batchDelta = TranscriptDelta()

    // (b) Live increments; one update = one slice (its upsertResult and/or upsertTurns).
    var live = TranscriptMerger()
    var costs: [Int64] = []
    costs.reserveCapacity(slices.count)
    var resultCalls = 0
    var turnCalls = 0
    var changedWords = 0
    let start = clock.now
    for (index, slice) in slices.enumerated() {
        let sliceWords = Array(data.words[slice.words])
        let sliceTurns = Array(data.turns[slice.turns])
        let before = clock.now
        if !sliceWords.isEmpty {
            changedWords += live.upsertResult(id: resultID(index), words: sliceWords, isFinal: true).changedWords.count
            resultCalls += 1
        }
        if !sliceTurns.isEmpty {
            changedWords += live.upsertTurns(sliceTurns).changedWords.count
            turnCalls += 1
        }
        costs.append(nanoseconds(clock.now - before))
    }
    let liveSeconds = (clock.now - start).seconds
    let mergeSeconds = Double(costs.reduce(0, +)) / 1e9
    let tenth = max(1, costs.count / 10)
    let firstTenth = Double(costs.prefix(tenth).reduce(0, +)) / Double(tenth) / 1000
    let lastTenth = Double(costs.suffix(tenth).reduce(0, +)) / Double(tenth) / 1000
    let sorted = costs.sorted()
    func percentile(_ p: Double) -> Double {
        Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
    }
    lines.append("(b) \(format(increment * 1000, 0)) ms increments, turns \(format(turnLatencySeconds, 1)) s late: "
        + "\(costs.count) updates (\(resultCalls) upsertResult + \(turnCalls) upsertTurns), "
        + "merge time \(format(mergeSeconds, 3)) s (loop \(format(liveSeconds, 3)) s), "
        + "\(format(Double(data.words.count) / mergeSeconds, 0)) words/s")
    lines.append("    per update: mean \(format(mergeSeconds * 1e6 / Double(costs.count), 1)) µs, "
        + "p50 \(format(percentile(0.5), 1)) µs, p99 \(format(percentile(0.99), 1)) µs, "
        + "max \(format(Double(sorted.last ?? 0) / 1000, 1)) µs; "
        + "mean of first 10% \(format(firstTenth, 1)) µs vs last 10% \(format(lastTenth, 1)) µs; "
        + "\(changedWords) word changes emitted")

    // Both runs must end in the same transcript (ids aside).
    let same = live.words.count == batch.words.count
        && zip(live.utterances, batch.utterances).allSatisfy { lhs, rhs in
            lhs.speaker == rhs.speaker && lhs.text == rhs.text && lhs.startSeconds == rhs.startSeconds
                && lhs.endSeconds == rhs.endSeconds
        }
        && live.utterances.count == batch.utterances.count
    lines.append("    incremental result equals batch: \(same ? "yes" : "NO") "
        + "(\(live.utterances.count) utterances, \(live.unlabelledWordCount) unlabelled words)")
    return lines.joined(separator: "\n")
}

/// A deterministic synthetic meeting: words of 0.15–0.5 s with short gaps and occasional pauses, and turns
/// of four speakers covering the same timeline with small gaps and overlaps. With `simultaneousFraction`
/// above 0, that fraction of words gets a 0.3 s word of a second voice starting halfway through it, so the
/// merge runs with words said at once (`TranscriptMerger+SimultaneousWords`); those words come on top of
/// `wordCount`.
struct MergeBenchmarkData {
    var words: [Word] = []
    var turns: [SpeakerTurn] = []
    var audioSeconds = 0.0

    init(words wordCount: Int, turns turnCount: Int, seed: UInt64, simultaneousFraction: Double = 0) {
        var random = SeededRandom(seed: seed)
        let vocabulary = ["the", "meeting", "budget", "next", "quarter", "we", "should", "ship", "it", "okay",
                          "agreed", "review", "numbers", "today", "plan", "risk"]
        words.reserveCapacity(wordCount)
        var time = 0.0
        for index in 0..<wordCount {
            let duration = random.uniform(0.15...0.5)
            words.append(Word(text: vocabulary[index % vocabulary.count], startSeconds: time,
                              endSeconds: time + duration, confidence: random.uniform(0.6...1)))
            if simultaneousFraction > 0 && random.uniform(0...1) < simultaneousFraction {
                let start = time + duration / 2
                words.append(Word(text: "mm", startSeconds: start, endSeconds: start + 0.3, confidence: 0.8))
            }
            time += duration + (random.uniform(0...1) < 0.05 ? random.uniform(1...2.5) : random.uniform(0.02...0.3))
        }
        audioSeconds = time
        let meanTurn = turnCount > 0 ? time / Double(turnCount) : 0
        var turnStart = 0.0
        var speaker = 0
        turns.reserveCapacity(turnCount)
        for index in 0..<turnCount {
            let length = meanTurn * random.uniform(0.4...1.6)
            speaker = (speaker + 1 + Int(random.uniform(0...2.99))) % 4
            turns.append(SpeakerTurn(id: "t\(index)", speaker: "Speaker \(speaker + 1)", startSeconds: turnStart,
                                     endSeconds: turnStart + length, confidence: random.uniform(0.5...1)))
            turnStart += length + random.uniform(-0.2...0.4)
            turnStart = max(0, turnStart)
        }
    }
}

private func nanoseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
}

private func format(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return "\(value)" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    if decimals == 0 { return String(Int64(rounded)) }
    let text = String(rounded)
    guard let dot = text.firstIndex(of: ".") else { return text + "." + String(repeating: "0", count: decimals) }
    let fraction = text[text.index(after: dot)...]
    return text + String(repeating: "0", count: max(0, decimals - fraction.count))
}
