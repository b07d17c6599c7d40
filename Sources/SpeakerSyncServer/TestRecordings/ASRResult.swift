import SessionProtocol
import TranscriptMerge

/// One ASR result as the in-process device sends it in a `words` message, and when: a phone's
/// recogniser reports a stretch of speech a little after its audio, first volatile, then final.
struct ASRResult: Sendable, Equatable {
    var message: WordsMessage
    /// Audio time after which a device would have this result: its last word's end plus the ASR delay.
    var availableAtSeconds: Double

    /// Groups words into results the way an on-device recogniser emits them: a result ends at a pause
    /// longer than `pauseSeconds` or after `maxWords`; each becomes available `delaySeconds` after its
    /// last word. With `volatile`, a result of two or more words is first sent without its last word
    /// (volatile) and then whole (final) under the same id.
    ///
    /// The same schedule as SpeakerSyncClient's `DeviceInput.results`, which `speakersync eval` streams
    /// with (the server does not link the client library), so a test recording sends what eval sends.
    static func schedule(_ words: [Word], pauseSeconds: Double = 0.5, maxWords: Int = 8, delaySeconds: Double = 0.3,
                         volatile: Bool) -> [ASRResult] {
        var groups: [[Word]] = []
        for word in words {
            if let last = groups.last?.last, word.startSeconds - last.endSeconds <= pauseSeconds, groups[groups.count - 1].count < maxWords {
                groups[groups.count - 1].append(word)
            } else {
                groups.append([word])
            }
        }
        var results: [ASRResult] = []
        for group in groups {
            // Ids are unique on the conversation timeline (the first word's start in ms).
            let id = "r\(Int((group[0].startSeconds * 1000).rounded()))"
            if volatile, group.count >= 2 {
                let partial = Array(group.dropLast())
                results.append(ASRResult(message: WordsMessage(resultID: id, isFinal: false, words: partial),
                                         availableAtSeconds: partial.last!.endSeconds + delaySeconds / 2))
            }
            results.append(ASRResult(message: WordsMessage(resultID: id, isFinal: true, words: group),
                                     availableAtSeconds: group.last!.endSeconds + delaySeconds))
        }
        return results.sorted { $0.availableAtSeconds < $1.availableAtSeconds }
    }
}
