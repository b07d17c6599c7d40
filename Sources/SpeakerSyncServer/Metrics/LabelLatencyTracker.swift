import TranscriptMerge

/// Measures label latency per word, the way a user feels it: from the moment the server had
/// everything it needed to label the word (its `words` message *and* its audio up to the word's
/// end) to the transcript update that first gave it a speaker, and to the one that gave it the
/// speaker it ended with. Pure: the caller passes monotonic times in seconds.
struct LabelLatencyTracker: Sendable {
    private struct Entry {
        var readySeconds: Double?
        var firstLabelSeconds: Double?
        var lastChangeSeconds: Double?
        var lastSpeaker: String?
    }

    private var entries: [WordID: Entry] = [:]
    /// Words whose audio has not fully arrived yet: (end on the timeline, id), sorted by end.
    private var waitingForAudio: [(endSeconds: Double, id: WordID)] = []
    private var audioEndSeconds = 0.0

    /// A `words` message arrived. A word id seen before (a volatile result replaced) keeps its first arrival.
    mutating func wordsArrived(_ words: [(id: WordID, endSeconds: Double)], at now: Double) {
        for word in words where entries[word.id] == nil {
            if word.endSeconds <= audioEndSeconds {
                entries[word.id] = Entry(readySeconds: now)
            } else {
                entries[word.id] = Entry()
                let index = waitingForAudio.partitioningIndex { $0.endSeconds > word.endSeconds }
                waitingForAudio.insert((word.endSeconds, word.id), at: index)
            }
        }
    }

    /// Audio up to `endSeconds` on the conversation timeline has arrived.
    mutating func audioArrived(upTo endSeconds: Double, at now: Double) {
        audioEndSeconds = max(audioEndSeconds, endSeconds)
        let ready = waitingForAudio.partitioningIndex { $0.endSeconds > audioEndSeconds }
        guard ready > 0 else { return }
        for item in waitingForAudio[..<ready] { entries[item.id]?.readySeconds = now }
        waitingForAudio.removeFirst(ready)
    }

    /// The audio is complete (finalize or disconnect): words reaching past its end are as ready as they will be.
    mutating func audioEnded(at now: Double) {
        for item in waitingForAudio { entries[item.id]?.readySeconds = now }
        waitingForAudio.removeAll()
    }

    /// A transcript update carrying these words went out.
    mutating func labelsSent(_ words: [(id: WordID, speaker: String?)], at now: Double) {
        for word in words {
            guard var entry = entries[word.id] else { continue }
            if let speaker = word.speaker {
                if entry.firstLabelSeconds == nil { entry.firstLabelSeconds = now }
                if speaker != entry.lastSpeaker { entry.lastChangeSeconds = now }
            }
            entry.lastSpeaker = word.speaker
            entries[word.id] = entry
        }
    }

    /// A word that no longer exists (its result was replaced by fewer words) is not measured.
    mutating func wordsRemoved(_ ids: [WordID]) {
        let removed = Set(ids)
        for id in removed { entries[id] = nil }
        waitingForAudio.removeAll { removed.contains($0.id) }
    }

    /// Latencies of labelled words, in word-id order. A label that arrived before the word was ready
    /// (a device turn ahead of the audio) counts as zero.
    func latencies() -> (first: [Double], final: [Double]) {
        var first: [Double] = []
        var final: [Double] = []
        for id in entries.keys.sorted() {
            let entry = entries[id]!
            guard let ready = entry.readySeconds, entry.lastSpeaker != nil,
                  let firstLabel = entry.firstLabelSeconds, let lastChange = entry.lastChangeSeconds else { continue }
            first.append(max(0, firstLabel - ready))
            final.append(max(0, lastChange - ready))
        }
        return (first, final)
    }
}

extension Array {
    /// The first index whose element satisfies `belongsInSecondPartition` (the array must be partitioned by it).
    func partitioningIndex(where belongsInSecondPartition: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if belongsInSecondPartition(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
