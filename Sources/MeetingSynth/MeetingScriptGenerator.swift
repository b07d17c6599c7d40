import DeterministicRandom
extension MeetingScript {
    /// A random but reproducible script: `speakerCount` speakers with distinct preset voices, `turnCount`
    /// turns of `wordsPerTurn` words drawn from `vocabulary`. Consecutive turns always change speaker
    /// (like a conversation), and the first turns go round the table so every speaker talks.
    /// `backchannels` adds short replies said over regular turns (and listeners who say nothing else),
    /// drawn from a generator of their own: the regular turns are the same with or without them.
    public static func generate(seed: UInt64, speakerCount: Int, turnCount: Int,
                                vocabulary: [String] = MeetingVocabulary.words,
                                wordsPerTurn: ClosedRange<Int> = 3 ... 12,
                                voices: [VoiceSpec] = VoiceSpec.presets,
                                backchannels: BackchannelPlan? = nil) throws -> MeetingScript {
        let listeners = backchannels?.listenerCount ?? 0
        guard (2 ... 6).contains(speakerCount), speakerCount + listeners <= voices.count, listeners >= 0 else {
            throw SynthError(.invalidScript, "speakerCount \(speakerCount) with \(listeners) listeners outside 2...\(min(6, voices.count)) voices")
        }
        if let backchannels {
            guard (0 ... 1).contains(backchannels.probability), !backchannels.words.isEmpty else {
                throw SynthError(.invalidScript, "backchannel probability outside 0...1, or no backchannel words")
            }
        }
        guard turnCount >= 1 else { throw SynthError(.invalidScript, "turnCount must be at least 1") }
        guard !vocabulary.isEmpty, wordsPerTurn.lowerBound >= 1 else {
            throw SynthError(.invalidScript, "empty vocabulary or turn length")
        }
        var rng = SeededRandom.derived(from: seed, purpose: 1)
        let speakers = (0 ..< speakerCount).map { MeetingSpeaker(id: "spk\($0 + 1)", voice: voices[$0]) }
        var turns: [MeetingTurn] = []
        var previous = -1
        for index in 0 ..< turnCount {
            var speaker: Int
            if index < speakerCount {
                speaker = index
            } else {
                speaker = rng.integer(0 ... speakerCount - 2)
                if speaker >= previous { speaker += 1 }  // uniform over the others
            }
            let length = rng.integer(wordsPerTurn)
            let words = (0 ..< length).map { _ in vocabulary[rng.integer(0 ... vocabulary.count - 1)] }
            turns.append(MeetingTurn(speaker: speakers[speaker].id, words: words))
            previous = speaker
        }
        guard let backchannels else { return MeetingScript(speakers: speakers, turns: turns) }
        let listening = (0 ..< listeners).map { MeetingSpeaker(id: "spk\(speakerCount + $0 + 1)", voice: voices[speakerCount + $0]) }
        var replies = SeededRandom.derived(from: seed, purpose: 3)
        var withReplies: [MeetingTurn] = []
        for turn in turns {
            withReplies.append(turn)
            // Every draw is made for every turn, so one turn's outcome does not shift the others'.
            let draw = replies.unit(), length = replies.integer(1 ... 2)
            let who = replies.integer(0 ... max(0, (listeners > 0 ? listeners : speakerCount - 1) - 1))
            let chosen = (0 ..< 2).map { _ in backchannels.words[replies.integer(0 ... backchannels.words.count - 1)] }
            guard draw < backchannels.probability else { continue }
            let speaker: String
            if listeners > 0 {
                speaker = listening[who].id
            } else {
                let others = speakers.map(\.id).filter { $0 != turn.speaker }
                speaker = others[who]
            }
            withReplies.append(MeetingTurn(speaker: speaker, words: Array(chosen.prefix(length)), isBackchannel: true))
        }
        return MeetingScript(speakers: speakers + listening, turns: withReplies)
    }
}
