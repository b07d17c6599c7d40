/// Labels ASR words with speakers from diarization turns and groups them into utterances, incrementally.
///
/// Pure value type, no I/O, no locking: the session runner owns one and calls it on its serial queue.
///
/// ## Labels
/// See `assignment(start:end:)`: majority overlap (confidence = winning overlap / word duration), else the
/// nearest turn within `MergeConfig.nearestTurnToleranceSeconds` (confidence 0.25…0.5), else unlabelled.
/// Words that overlap each other in time were said by different people: see `TranscriptMerger+SimultaneousWords`.
/// Unlabelled words stay in the transcript and are re-examined whenever a turn near them changes; at the
/// session's end `labelStrandedWords` gives those still unlabelled the nearest turn's speaker.
/// No word is ever dropped: a word disappears only when its own ASR result is replaced without it.
///
/// ## Utterances
/// Words sorted by (start, end, id); a word joins the current utterance when it has the same speaker
/// (nil is its own speaker) and `word.start − latest end so far in the utterance < utteranceGapSeconds`.
/// (The latest end rather than the previous word's end, so a short word inside a long one cannot split it.)
///
/// ## Stable ids
/// Only the regrouped region gets new ids: each new utterance inherits the id of the old utterance it shares
/// the most words with (each old id at most once; ties to the earlier new utterance, then the smaller old id);
/// the rest take fresh ids from a counter that never goes back.
///
/// ## Cost
/// Words and turns live in arrays sorted by (start, end, id). Each update:
/// - finds every affected word or turn by binary search (O(log n));
/// - relabels the words within [turn start − tolerance, turn end + tolerance] of each changed turn, each label
///   costing O(log T + turns within the longest-turn window);
/// - once two words have overlapped in time, widens every change by `simultaneousReachSeconds` (5.5 s plus
///   twice the longest word at the defaults) and relabels the words in it, so that stretches are decided again
///   (`speakersync-bench merge --simultaneous 0.05`: mean 12.6 µs per update, against 4.9 µs without);
/// - regroups from the start of the utterance before the first changed word until grouping falls back in step
///   with the old one (the boundary of an untouched utterance), so in proportion to the affected utterances.
///
/// In-order arrival (the live case) and a batch into an empty merger therefore cost O((W+T) log(W+T)) in
/// total. Inserting or deleting in the middle of the timeline also moves the array suffix after that point
/// (a memmove); search windows use the longest word and turn seen so far, so one absurdly long word or turn
/// widens every later search. `mergeSpeaker` is O(W + T). Growing the word array and the result index
/// occasionally reallocates them (amortized O(1) per word, but one update in a long session pays the copy).
public struct TranscriptMerger: Sendable {
    public let config: MergeConfig

    /// All words, sorted by (start, end, id). Utterances are the maximal runs of equal `utteranceID`.
    var store: [LabelledWord] = []
    /// Per ASR result: where its words sit in `store`, so replacing it finds them by binary search.
    var results: [String: ResultEntry] = [:]
    /// All turns, sorted by (start, end, id), speakers already resolved through `aliases`.
    var turnList: [SpeakerTurn] = []
    var turnByID: [String: SpeakerTurn] = [:]
    /// Merged speakers: `from` → `into`, flattened (a value is never itself a key).
    var aliases: [String: String] = [:]
    /// Upper bounds (never lowered) used to widen time-window searches.
    var maxWordDurationSeconds = 0.0
    var maxTurnDurationSeconds = 0.0
    var nextUtteranceRaw: UInt64 = 1
    var unlabelledCount = 0
    /// Set once two words have overlapped in time (never cleared): from then on every change relabels the
    /// words within `simultaneousReachSeconds` of it. Until then labels are purely time-based and each
    /// update touches only what it must.
    var hasSimultaneousWords = false
    /// While `labelStrandedWords` runs: words ending by then take the nearest turn at any distance.
    var strandedWordsEndSeconds: Double?

    /// `utteranceID` of a word not yet grouped (never handed out).
    static let ungrouped = UtteranceID(0)

    public init(config: MergeConfig = .default) {
        self.config = config
    }

    // MARK: Reading

    /// The whole transcript in time order. O(W).
    public var utterances: [Utterance] {
        var output: [Utterance] = []
        var start = 0
        while start < store.count {
            var end = start + 1
            while end < store.count && store[end].utteranceID == store[start].utteranceID { end += 1 }
            output.append(Utterance(id: store[start].utteranceID, words: Array(store[start..<end])))
            start = end
        }
        return output
    }

    /// All words in (start, end, id) order.
    public var words: [LabelledWord] { store }

    public var unlabelledWordCount: Int { unlabelledCount }
    /// Words held, and those of one result (what a replacement of that result would take back).
    public var wordCount: Int { store.count }
    public func wordCount(ofResult id: String) -> Int { results[id]?.slots.count ?? 0 }

    /// All turns in (start, end, id) order, with merged speakers already relabelled.
    public var turns: [SpeakerTurn] { turnList }

    // MARK: Updates

    /// Adds or replaces an ASR result (SpeechAnalyzer volatile → final): the result's previous words are
    /// replaced by these. Word i gets `WordID(id, i)`; words beyond the new count are reported removed.
    public mutating func upsertResult(id: String, words: [Word], isFinal: Bool) -> TranscriptDelta {
        var update = PendingUpdate()
        stageResults([(id, words, isFinal)], into: &update)
        return commit(&update)
    }

    /// Adds or replaces turns by turn id (a provider revising a past turn re-sends its id).
    /// Within one call the last turn with a given id wins.
    public mutating func upsertTurns(_ turns: [SpeakerTurn]) -> TranscriptDelta {
        var update = PendingUpdate()
        stageTurns(upserting: turns, removing: [], into: &update)
        return commit(&update)
    }

    /// Removes turns by id; unknown ids are ignored.
    public mutating func removeTurns(ids: [String]) -> TranscriptDelta {
        var update = PendingUpdate()
        stageTurns(upserting: [], removing: ids, into: &update)
        return commit(&update)
    }

    /// Relabels every turn (and so word) of speaker `from` as `into`, past and future: turns that arrive
    /// later with speaker `from` are relabelled too. Names are resolved through earlier merges first;
    /// merging a speaker into itself (after resolution) changes nothing. O(W + T).
    public mutating func mergeSpeaker(_ from: String, into: String) -> TranscriptDelta {
        let source = resolve(from)
        let target = resolve(into)
        guard source != target else { return TranscriptDelta() }
        for (key, value) in aliases where value == source { aliases[key] = target }
        aliases[source] = target
        aliases[target] = nil

        var update = PendingUpdate()
        let tolerance = config.effectiveToleranceSeconds
        var changed: [String] = []
        for index in turnList.indices where turnList[index].speaker == source {
            turnList[index].speaker = target
            changed.append(turnList[index].id)
            update.labelIntervals.append(
                (turnList[index].startSeconds - tolerance, turnList[index].endSeconds + tolerance))
        }
        for id in changed { turnByID[id]?.speaker = target }
        // Words restored with this label but no turn behind it are re-examined too.
        for word in store where word.speaker == source {
            update.labelIntervals.append((word.startSeconds, word.endSeconds))
        }
        return commit(&update)
    }

    /// Batch form used on resume and by the benchmark: all results and turns at once, one delta.
    /// Later entries with the same result or turn id win.
    public mutating func apply(
        results: [(id: String, words: [Word], isFinal: Bool)], turns: [SpeakerTurn]
    ) -> TranscriptDelta {
        var update = PendingUpdate()
        stageTurns(upserting: turns, removing: [], into: &update)
        stageResults(results.map { ($0.id, $0.words, $0.isFinal) }, into: &update)
        return commit(&update)
    }

    /// Restores state from storage (resume after reconnect), keeping the stored labels and utterance ids.
    ///
    /// Words are trusted as stored (not relabelled until a turn near them changes). Duplicate word or turn
    /// ids keep the last. If an utterance id appears in two separate runs (or is 0), the later run gets a
    /// fresh id in memory so ids stay unique; fresh ids continue after the largest restored one.
    /// Speaker merges are not part of the stored state: call `mergeSpeaker` again after restoring to keep
    /// relabelling turns that arrive later.
    public mutating func restore(words: [LabelledWord], turns: [SpeakerTurn]) {
        self = TranscriptMerger(config: config)
        var byID: [WordID: LabelledWord] = [:]
        byID.reserveCapacity(words.count)
        for var word in words {
            let span = sanitizedSpan(start: word.startSeconds, end: word.endSeconds)
            word.startSeconds = span.start
            word.endSeconds = span.end
            word.confidence = sanitizedConfidence(word.confidence)
            word.speakerConfidence = sanitizedConfidence(word.speakerConfidence)
            byID[word.id] = word
        }
        store = Array(byID.values)
        store.sort { $0.precedes($1) }
        var maxRaw: UInt64 = 0
        for word in store {
            maxRaw = max(maxRaw, word.utteranceID.rawValue)
            maxWordDurationSeconds = max(maxWordDurationSeconds, word.endSeconds - word.startSeconds)
            if word.speaker == nil { unlabelledCount += 1 }
            results[word.id.resultID, default: ResultEntry()].slots.append(
                WordSlot(index: word.id.index, startSeconds: word.startSeconds, endSeconds: word.endSeconds))
        }
        nextUtteranceRaw = maxRaw == .max ? maxRaw : maxRaw + 1
        var seen = Set<UtteranceID>()
        var index = 0
        while index < store.count {
            let original = store[index].utteranceID
            var runEnd = index + 1
            while runEnd < store.count && store[runEnd].utteranceID == original { runEnd += 1 }
            if original == Self.ungrouped || seen.contains(original) {
                let fresh = freshUtteranceID()
                for k in index..<runEnd { store[k].utteranceID = fresh }
                seen.insert(fresh)
            } else {
                seen.insert(original)
            }
            index = runEnd
        }
        var turnsByID: [String: SpeakerTurn] = [:]
        for turn in turns { turnsByID[turn.id] = sanitized(turn) }
        turnByID = turnsByID
        turnList = Array(turnsByID.values)
        turnList.sort { $0.precedes($1) }
        for turn in turnList {
            maxTurnDurationSeconds = max(maxTurnDurationSeconds, turn.endSeconds - turn.startSeconds)
        }
        hasSimultaneousWords = config.effectiveSimultaneousStretchSeconds != nil
            && store.indices.contains { collidesWithAnotherWord(at: $0) }
    }

    // MARK: Internals

    func resolve(_ speaker: String) -> String { aliases[speaker] ?? speaker }

    func sanitized(_ turn: SpeakerTurn) -> SpeakerTurn {
        var turn = turn
        let span = sanitizedSpan(start: turn.startSeconds, end: turn.endSeconds)
        turn.startSeconds = span.start
        turn.endSeconds = span.end
        turn.confidence = sanitizedConfidence(turn.confidence)
        turn.speaker = resolve(turn.speaker)
        return turn
    }

    mutating func freshUtteranceID() -> UtteranceID {
        let id = UtteranceID(nextUtteranceRaw)
        if nextUtteranceRaw < .max { nextUtteranceRaw += 1 }
        return id
    }
}

/// Where one ASR result's words are, so that replacing the result can find and remove them.
struct ResultEntry: Sendable {
    var slots: [WordSlot] = []
}

struct WordSlot: Sendable {
    var index: Int
    var startSeconds: Double
    var endSeconds: Double
}

/// Scratch state of one update, from staging to the delta.
struct PendingUpdate {
    /// The stored value, before this update, of every pre-existing word it touched (relabelled, replaced or
    /// removed). Words created by the update have no entry: they carry `ungrouped` until regrouping.
    var before: [WordID: LabelledWord] = [:]
    /// Sort keys of removed words, to mark where something disappeared.
    var removedKeys: [(start: Double, end: Double, id: WordID)] = []
    /// Positions in `store` of the words inserted by this update (ascending; valid once staging is done).
    var insertedIndices: [Int] = []
    /// Time intervals whose words must be relabelled because a turn changed there.
    var labelIntervals: [(start: Double, end: Double)] = []
    /// Results replaced in this update and their new word counts.
    var replacedResults: [String: Int] = [:]

    mutating func remember(_ word: LabelledWord) {
        if before.index(forKey: word.id) == nil { before[word.id] = word }
    }
}
