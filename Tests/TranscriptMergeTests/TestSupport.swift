import TranscriptMerge

func word(_ text: String, _ start: Double, _ end: Double) -> Word {
    Word(text: text, startSeconds: start, endSeconds: end, confidence: 0.9)
}

func turn(_ id: String, _ speaker: String, _ start: Double, _ end: Double, confidence: Double? = nil) -> SpeakerTurn {
    SpeakerTurn(id: id, speaker: speaker, startSeconds: start, endSeconds: end, confidence: confidence)
}

/// An utterance without its id: what must not depend on arrival order.
struct UtteranceShape: Hashable, CustomStringConvertible {
    var speaker: String?
    var text: String
    var startSeconds: Double
    var endSeconds: Double
    var words: [WordShape]

    init(_ utterance: Utterance) {
        speaker = utterance.speaker
        text = utterance.text
        startSeconds = utterance.startSeconds
        endSeconds = utterance.endSeconds
        words = utterance.words.map(WordShape.init)
    }

    var description: String { "\(speaker ?? "-")[\(startSeconds)-\(endSeconds)] \(text)" }
}

struct WordShape: Hashable {
    var id: WordID
    var text: String
    var startSeconds: Double
    var endSeconds: Double
    var isFinal: Bool
    var speaker: String?
    var speakerConfidence: Double?

    init(_ word: LabelledWord) {
        id = word.id
        text = word.text
        startSeconds = word.startSeconds
        endSeconds = word.endSeconds
        isFinal = word.isFinal
        speaker = word.speaker
        speakerConfidence = word.speakerConfidence
    }
}

func shapes(_ merger: TranscriptMerger) -> [UtteranceShape] { merger.utterances.map(UtteranceShape.init) }

/// What a client (or the database) holds after applying every delta it was sent, to check that deltas
/// carry exactly what changed.
struct DeltaMirror {
    var utterances: [UtteranceID: Utterance] = [:]
    var words: [WordID: LabelledWord] = [:]
    /// Entries of a delta that did not actually change anything (should stay empty).
    var redundant: [String] = []

    mutating func apply(_ delta: TranscriptDelta) {
        for id in delta.removed {
            if utterances.removeValue(forKey: id) == nil { redundant.append("removed unknown \(id)") }
        }
        for utterance in delta.upserted {
            if utterances[utterance.id] == utterance { redundant.append("unchanged utterance \(utterance.id)") }
            utterances[utterance.id] = utterance
        }
        for id in delta.removedWords {
            if words.removeValue(forKey: id) == nil { redundant.append("removed unknown word \(id)") }
        }
        for word in delta.changedWords {
            if words[word.id] == word { redundant.append("unchanged word \(word.id)") }
            words[word.id] = word
        }
    }

    func matches(_ merger: TranscriptMerger) -> Bool {
        let current = merger.utterances
        guard current.count == utterances.count else { return false }
        for utterance in current where utterances[utterance.id] != utterance { return false }
        let currentWords = merger.words
        guard currentWords.count == words.count else { return false }
        for word in currentWords where words[word.id] != word { return false }
        return true
    }
}
