/// Words said at the same moment by two people.
///
/// Why: one recogniser on one microphone rarely reports two words over the same audio, but a device that
/// transcribes each voice or each microphone on its own does, and in overlapped speech the turns alone
/// cannot say whose word is whose. Both speakers' turns cover both words, and a provider that reports one
/// speaker at a time switches somewhere inside the overlap, so the words on the wrong side of its switch
/// go to the other person. Labelling by time alone lost nearly half of such words, even with the reference
/// turns themselves (an oracle).
///
/// Two facts decide them instead. One person cannot say two words at once, so words that overlap in time
/// belong to different people. Speech runs on, so one of the two voices in such a stretch carries on from
/// the word just before it or into the word just after it, and has that word's speaker.
///
/// ## The rule
/// A *simultaneous stretch* is a connected group of words linked by pairwise overlaps of more than
/// `MergeConfig.simultaneousWordOverlapSeconds`, spanning at most `simultaneousStretchSeconds`.
/// - Its words are split into two voices in time order. The first word starts voice 0. Each later word
///   goes to a voice whose last word has ended (by the overlap allowance); if both have, to the one that
///   ended latest, which carries speech on. A word for which neither voice is free means a third voice,
///   and the stretch is left to the turns.
/// - The word before (ending within `utteranceGapSeconds` of the stretch) is continued by voice 0, by a
///   margin of how much earlier voice 0 started than voice 1. The word after (starting within the gap of
///   its end) is continued by the voice that ends last, by a margin of how much later it ends. The anchor
///   with the larger margin gives its voice its word's time-based speaker. A stretch without a labelled
///   word on both sides is left to the turns: one side alone cannot be weighed against the other.
/// - The other voice takes the other anchor word's speaker when that differs. Otherwise it takes the most
///   common time-based label among its own words other than the anchored speaker (ties: the earliest).
///   If there is none, the turns never showed a second person there, and the stretch keeps its
///   time-based labels.
/// - A word whose speaker changes this way gets confidence 0.5: decided by its neighbours, not by a turn.
///
/// On the synthetic meetings' true words, the voices came out one person each in all 15 stretches, and
/// the larger-margin anchor named them right in 12 of the 13 with different speakers before and after
/// (the start alone: 9, the end alone: 11; docs/accuracy.md).
///
/// Only time-based labels feed the rule, never other stretches' results, so one word's label depends on
/// words and turns within `simultaneousReachSeconds` of it, and `commit` relabels that far around every
/// change. A transcript without simultaneous words is labelled exactly as before.
extension TranscriptMerger {
    /// How far one word's label can depend on other words and turns: the stretch, the gap to the word
    /// before or after it, the longest word twice (a neighbour's start may lie that far before its end)
    /// and the nearest-turn tolerance (how far a turn reaches a word's time-based label).
    var simultaneousReachSeconds: Double {
        (config.effectiveSimultaneousStretchSeconds ?? 0) + config.effectiveGapSeconds
            + 2 * maxWordDurationSeconds + config.effectiveToleranceSeconds
    }

    /// The label of `store[index]`: its time-based assignment, changed only inside a simultaneous stretch.
    func label(at index: Int) -> SpeakerAssignment {
        let word = store[index]
        let base = assignment(start: word.startSeconds, end: word.endSeconds)
        guard hasSimultaneousWords,
              let members = simultaneousStretch(around: index),
              let split = voices(of: members),
              let speakers = voiceSpeakers(members: members, split: split) else { return base }
        guard let position = members.firstIndex(of: index) else { return base }
        let speaker = speakers[Int(split.voices[position])]
        if speaker == base.speaker { return base }
        return SpeakerAssignment(speaker: speaker, confidence: 0.5)
    }

    /// Whether `store[index]` overlaps another word by more than the allowance (the rule's trigger).
    func collidesWithAnotherWord(at index: Int) -> Bool {
        var found = false
        forEachCollision(of: index) { _ in found = true; return false }
        return found
    }

    /// Calls `body` with the index of every word overlapping `store[index]` by more than the allowance, in
    /// store order, until it returns false.
    private func forEachCollision(of index: Int, _ body: (Int) -> Bool) {
        let allowance = config.effectiveSimultaneousOverlapSeconds
        let word = store[index]
        var other = store.firstIndex(startingAtOrAfter: word.startSeconds - maxWordDurationSeconds)
        while other < store.count && store[other].startSeconds < word.endSeconds - allowance {
            let candidate = store[other]
            let overlap = min(word.endSeconds, candidate.endSeconds) - max(word.startSeconds, candidate.startSeconds)
            if other != index && overlap > allowance && !body(other) { return }
            other += 1
        }
    }

    /// The store indices (ascending) of the simultaneous stretch holding `store[index]`, or nil when the word
    /// overlaps no other word or the stretch is longer than allowed. Every member finds the same stretch:
    /// the search gives up exactly when the whole group spans too long, whichever word it starts from.
    private func simultaneousStretch(around index: Int) -> [Int]? {
        guard let limit = config.effectiveSimultaneousStretchSeconds else { return nil }
        var members: Set<Int> = [index]
        var frontier = [index]
        var earliest = store[index].startSeconds
        var latest = store[index].endSeconds
        var tooLong = false
        while let current = frontier.popLast(), !tooLong {
            forEachCollision(of: current) { other in
                guard members.insert(other).inserted else { return true }
                earliest = min(earliest, store[other].startSeconds)
                latest = max(latest, store[other].endSeconds)
                if latest - earliest > limit { tooLong = true; return false }
                frontier.append(other)
                return true
            }
        }
        guard !tooLong, members.count > 1 else { return nil }
        return members.sorted()
    }

    /// A stretch split into two voices: each member's voice, and each voice's first start and last end.
    private struct VoiceSplit {
        var voices: [UInt8]
        var firstStartSeconds: [Double]
        var lastEndSeconds: [Double]
    }

    /// Voice 0 (it starts first) or 1 for each member, or nil when three voices overlap.
    private func voices(of members: [Int]) -> VoiceSplit? {
        let allowance = config.effectiveSimultaneousOverlapSeconds
        var voices: [UInt8] = [0]
        voices.reserveCapacity(members.count)
        var firstStart: [Double] = [store[members[0]].startSeconds, .infinity]
        var lastEnd: [Double] = [store[members[0]].endSeconds, -.infinity]
        for index in members.dropFirst() {
            let word = store[index]
            let free = lastEnd.map { $0 <= word.startSeconds + allowance }
            let voice: Int
            switch (free[0], free[1]) {
            case (true, true): voice = lastEnd[1] > lastEnd[0] ? 1 : 0
            case (true, false): voice = 0
            case (false, true): voice = 1
            case (false, false): return nil
            }
            voices.append(UInt8(voice))
            firstStart[voice] = min(firstStart[voice], word.startSeconds)
            lastEnd[voice] = max(lastEnd[voice], word.endSeconds)
        }
        return VoiceSplit(voices: voices, firstStartSeconds: firstStart, lastEndSeconds: lastEnd)
    }

    /// The speakers of voices 0 and 1 from time-based labels, or nil when the turns show no second person.
    private func voiceSpeakers(members: [Int], split: VoiceSplit) -> [String]? {
        func timeBased(_ index: Int) -> String? {
            assignment(start: store[index].startSeconds, end: store[index].endSeconds).speaker
        }
        let gap = config.effectiveGapSeconds
        let first = members[0]
        let last = members[members.count - 1]
        let firstStart = split.firstStartSeconds
        let lastEnd = split.lastEndSeconds
        // Both neighbours must be there: speech running on is the whole argument, and one side alone says
        // nothing about how clear it is against the other.
        guard first > 0, store[first - 1].endSeconds >= store[first].startSeconds - gap,
              last + 1 < store.count, store[last + 1].startSeconds <= max(lastEnd[0], lastEnd[1]) + gap,
              let before = timeBased(first - 1), let after = timeBased(last + 1) else { return nil }

        // Which voice continues the speech around the stretch: voice 0 (it started first) carries on from
        // the word before, by how much earlier it started; the voice that ends last carries on into the
        // word after, by how much later it ended. The clearer of the two decides.
        let trustEnd = abs(lastEnd[1] - lastEnd[0]) > firstStart[1] - firstStart[0]
        let anchored = trustEnd ? (lastEnd[1] > lastEnd[0] ? 1 : 0) : 0
        let anchorSpeaker = trustEnd ? after : before
        var otherSpeaker: String? = before != after ? (trustEnd ? before : after) : nil
        if otherSpeaker == nil {
            // The most common time-based label of the other voice's own words that is not the anchor's
            // (ties: the earliest).
            var counts: [String: Int] = [:]
            var order: [String] = []
            for (index, voice) in zip(members, split.voices) where Int(voice) != anchored {
                guard let speaker = timeBased(index), speaker != anchorSpeaker else { continue }
                if counts[speaker] == nil { order.append(speaker) }
                counts[speaker, default: 0] += 1
            }
            otherSpeaker = order.reduce(nil as String?) { best, speaker in
                guard let best else { return speaker }
                return counts[speaker]! > counts[best]! ? speaker : best
            }
        }
        guard let otherSpeaker else { return nil }
        return anchored == 0 ? [anchorSpeaker, otherSpeaker] : [otherSpeaker, anchorSpeaker]
    }
}
