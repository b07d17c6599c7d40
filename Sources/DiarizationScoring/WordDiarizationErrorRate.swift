/// The word diarization error of one transcript.
public struct WDERResult: Sendable, Hashable {
    /// Hypothesis words aligned to a reference word that has a speaker (correct or substituted text).
    public var alignedWordCount: Int
    /// Aligned words whose speaker, after mapping, is not the reference word's (including unlabelled ones).
    public var mislabelledWordCount: Int
    /// Aligned hypothesis words without a speaker (also counted as mislabelled).
    public var unlabelledWordCount: Int
    public var hypothesisWordCount: Int
    /// mislabelled / aligned; 0 when nothing is aligned.
    public var errorRate: Double
    /// Hypothesis speaker → reference speaker, one-to-one, maximising correctly labelled aligned words.
    public var mapping: [String: String]

    /// Aligned words whose reference word lies in overlapped speech, and how many of them are mislabelled:
    /// there a single label cannot be fully right, so reports show this share apart.
    public var overlappedAlignedWordCount: Int
    public var overlappedMislabelledWordCount: Int
    /// Aligned pairs left out because the reference word has no speaker.
    public var unscoredWordCount: Int
    /// The text alignment itself, for a WER alongside: substituted, deleted (reference only) and
    /// inserted (hypothesis only) words.
    public var substitutedWordCount: Int
    public var deletedWordCount: Int
    public var insertedWordCount: Int

    public init(
        alignedWordCount: Int, mislabelledWordCount: Int, unlabelledWordCount: Int, hypothesisWordCount: Int,
        mapping: [String: String], overlappedAlignedWordCount: Int = 0, overlappedMislabelledWordCount: Int = 0,
        unscoredWordCount: Int = 0, substitutedWordCount: Int = 0, deletedWordCount: Int = 0, insertedWordCount: Int = 0
    ) {
        self.alignedWordCount = alignedWordCount
        self.mislabelledWordCount = mislabelledWordCount
        self.unlabelledWordCount = unlabelledWordCount
        self.hypothesisWordCount = hypothesisWordCount
        self.errorRate = alignedWordCount > 0 ? Double(mislabelledWordCount) / Double(alignedWordCount) : 0
        self.mapping = mapping
        self.overlappedAlignedWordCount = overlappedAlignedWordCount
        self.overlappedMislabelledWordCount = overlappedMislabelledWordCount
        self.unscoredWordCount = unscoredWordCount
        self.substitutedWordCount = substitutedWordCount
        self.deletedWordCount = deletedWordCount
        self.insertedWordCount = insertedWordCount
    }
}

/// Word diarization error rate (Shafey et al. 2019, as DiarizationLM computes it): align the hypothesis
/// words to the reference words by text (Levenshtein), keep the pairs that are correct or substituted,
/// map hypothesis speakers to reference speakers one-to-one maximising the pairs that agree (Hungarian),
/// and count the pairs whose mapped speaker differs. Word times play no part.
public enum WordDiarizationErrorRate {
    public static func score(reference: [ScoredWord], hypothesis: [ScoredWord]) -> WDERResult {
        var vocabulary: [String: Int] = [:]
        func id(_ word: ScoredWord) -> Int {
            let key = WordAlignment.normalized(word.text)
            if let known = vocabulary[key] { return known }
            vocabulary[key] = vocabulary.count
            return vocabulary.count - 1
        }
        let referenceIDs = reference.map(id)
        let hypothesisIDs = hypothesis.map(id)
        let alignment = WordAlignment(reference: referenceIDs, hypothesis: hypothesisIDs)

        var aligned: [(reference: Int, hypothesis: Int)] = []
        var substituted = 0, deleted = 0, inserted = 0, unscored = 0
        for pair in alignment.pairs {
            switch (pair.reference, pair.hypothesis) {
            case let (r?, h?):
                if referenceIDs[r] != hypothesisIDs[h] { substituted += 1 }
                if reference[r].speaker == nil { unscored += 1 } else { aligned.append((r, h)) }
            case (_?, nil): deleted += 1
            case (nil, _?): inserted += 1
            case (nil, nil): break
            }
        }

        var referenceSpeakers: [String: Int] = [:]
        var hypothesisSpeakers: [String: Int] = [:]
        var counts: [[Double]] = []
        for (r, h) in aligned {
            guard let hypothesisSpeaker = hypothesis[h].speaker, let referenceSpeaker = reference[r].speaker else { continue }
            let column = referenceSpeakers[referenceSpeaker] ?? {
                referenceSpeakers[referenceSpeaker] = referenceSpeakers.count
                for row in counts.indices { counts[row].append(0) }
                return referenceSpeakers.count - 1
            }()
            let row = hypothesisSpeakers[hypothesisSpeaker] ?? {
                hypothesisSpeakers[hypothesisSpeaker] = hypothesisSpeakers.count
                counts.append([Double](repeating: 0, count: referenceSpeakers.count))
                return hypothesisSpeakers.count - 1
            }()
            counts[row][column] += 1
        }
        let referenceNames = referenceSpeakers.sorted { $0.value < $1.value }.map(\.key)
        let hypothesisNames = hypothesisSpeakers.sorted { $0.value < $1.value }.map(\.key)
        var mapping: [String: String] = [:]
        for (row, column) in HungarianAssignment.maximize(counts).enumerated() {
            guard let column, counts[row][column] > 0 else { continue }
            mapping[hypothesisNames[row]] = referenceNames[column]
        }

        var mislabelled = 0, unlabelled = 0, overlapped = 0, overlappedMislabelled = 0
        for (r, h) in aligned {
            let hypothesisSpeaker = hypothesis[h].speaker
            if hypothesisSpeaker == nil { unlabelled += 1 }
            let wrong = hypothesisSpeaker.flatMap { mapping[$0] } != reference[r].speaker
            if wrong { mislabelled += 1 }
            if reference[r].isOverlapped {
                overlapped += 1
                if wrong { overlappedMislabelled += 1 }
            }
        }
        return WDERResult(
            alignedWordCount: aligned.count, mislabelledWordCount: mislabelled, unlabelledWordCount: unlabelled,
            hypothesisWordCount: hypothesis.count, mapping: mapping,
            overlappedAlignedWordCount: overlapped, overlappedMislabelledWordCount: overlappedMislabelled,
            unscoredWordCount: unscored, substitutedWordCount: substituted, deletedWordCount: deleted,
            insertedWordCount: inserted)
    }
}
