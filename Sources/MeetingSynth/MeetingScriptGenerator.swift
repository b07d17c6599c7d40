import DeterministicRandom
extension MeetingScript {
    /// A random but reproducible script: `speakerCount` speakers with distinct preset voices, `turnCount`
    /// turns of `wordsPerTurn` words drawn from `vocabulary`. Consecutive turns always change speaker
    /// (like a conversation), and the first turns go round the table so every speaker talks.
    public static func generate(seed: UInt64, speakerCount: Int, turnCount: Int,
                                vocabulary: [String] = MeetingVocabulary.words,
                                wordsPerTurn: ClosedRange<Int> = 3 ... 12,
                                voices: [VoiceSpec] = VoiceSpec.presets) throws -> MeetingScript {
        guard (2 ... 6).contains(speakerCount), speakerCount <= voices.count else {
            throw SynthError(.invalidScript, "speakerCount \(speakerCount) outside 2...\(min(6, voices.count))")
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
        return MeetingScript(speakers: speakers, turns: turns)
    }
}
