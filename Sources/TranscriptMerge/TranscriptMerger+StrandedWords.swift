/// At a session's end, words that no turn reaches: the recogniser heard them where the provider heard no
/// one (a quiet voice under the VAD's threshold, a word placed in a pause, noise heard as a word). While
/// turns still arrive such a word stays unlabelled, since a later turn may cover it; once the provider's
/// final turns are in, leaving it so would leave it without a speaker for good. It then takes the speaker
/// of the nearest turn, at whatever distance, with a confidence that says it was guessed.
extension TranscriptMerger {
    /// Labels every word without a speaker that ends by `audioEndSeconds` (words beyond the audio the
    /// session had stay unlabelled: no provider heard their time) with the speaker of the turn nearest to
    /// it (the smallest gap; ties as in `assignment(start:end:)`), confidence
    /// `SpeakerAssignment.strandedConfidence`. Words that overlap others in time are decided again with
    /// their neighbours, as after any change. Nothing changes without turns. After it the rule is off
    /// again: a word relabelled later by a nearby turn follows `assignment(start:end:)`.
    /// Returns the change and the words that were stranded (those it gave a speaker).
    @discardableResult
    public mutating func labelStrandedWords(audioEndSeconds: Double) -> (delta: TranscriptDelta, strandedWords: [WordID]) {
        guard unlabelledCount > 0, !turnList.isEmpty else { return (TranscriptDelta(), []) }
        var update = PendingUpdate()
        var stranded: [WordID] = []
        for word in store where word.speaker == nil && word.endSeconds <= audioEndSeconds {
            update.labelIntervals.append((word.startSeconds, word.endSeconds))
            stranded.append(word.id)
        }
        guard !stranded.isEmpty else { return (TranscriptDelta(), []) }
        strandedWordsEndSeconds = audioEndSeconds
        defer { strandedWordsEndSeconds = nil }
        return (commit(&update), stranded)
    }

    /// The turn with the smallest gap to [start, end] at any distance, for `assignment(start:end:)` while
    /// `labelStrandedWords` runs. O(T): it runs once per stranded word, once per session.
    func strandedAssignment(start: Double, end: Double) -> SpeakerAssignment? {
        guard let limit = strandedWordsEndSeconds, end <= limit else { return nil }
        var nearest: NearestTurn?
        for turn in turnList {
            let candidate = (max(turn.startSeconds - end, start - turn.endSeconds, 0), turn.confidence ?? 0, turn.speaker, turn.id)
            if nearest.map({ Self.prefers(candidate, over: $0) }) ?? true { nearest = candidate }
        }
        guard let nearest else { return nil }
        return SpeakerAssignment(speaker: nearest.speaker,
                                 confidence: SpeakerAssignment.strandedConfidence(distance: nearest.distance, tolerance: config.effectiveToleranceSeconds))
    }
}

extension SpeakerAssignment {
    /// A stranded word's confidence: 0.25 at the tolerance (where `nearestConfidence` ends), then
    /// 0.25 / (1 + seconds beyond it) (0.125 a second beyond, 0.05 four seconds beyond), never 0: below
    /// what a neighbouring turn within reach gives (`nearestConfidence`, 0.25–0.5).
    static func strandedConfidence(distance: Double, tolerance: Double) -> Double {
        0.25 / (1 + max(0, distance - tolerance))
    }
}
