import DeterministicRandom
import TranscriptMerge

/// Measures label latency per word, the way a user feels it: from the moment the server had
/// everything it needed to label the word (its `words` message *and* its audio up to the word's
/// end) to the transcript update that first gave it a speaker, and to the one that gave it the
/// speaker it ended with. Pure: the caller passes monotonic times in seconds.
///
/// Memory is bounded: up to `sampleCapacity` words every word is measured; past it the tracker keeps
/// a uniform random sample of that many of the session's words (reservoir sampling, Vitter's
/// algorithm R, with a fixed seed so a replay gives the same sample), so a session's percentiles
/// still describe all of it while a 50,000-word session holds 10,000 entries, not 50,000.
struct LabelLatencyTracker: Sendable {
    /// Words measured at most (about 0.6 MB of entries).
    static let sampleCapacity = 10_000

    /// One per measured word, so kept small: times in whole milliseconds of the session's monotonic
    /// clock (`UInt32` reaches 49 days), `none` where not yet known, and the last speaker as an index
    /// into `speakerLabels`. (With `Double?` times and a `String?` speaker for every word a
    /// 50,000-word session held 11.5 MB here.)
    private struct Entry {
        static let none = UInt32.max
        /// Where its id sits in `sampledIDs`.
        var slot: Int32
        var readyMilliseconds = Entry.none
        var firstLabelMilliseconds = Entry.none
        var lastChangeMilliseconds = Entry.none
        /// Index into `speakerLabels`; -1: no speaker.
        var lastSpeaker: Int32 = -1

        mutating func noteLabel(_ speaker: Int32, at milliseconds: UInt32) {
            if speaker >= 0 {
                if firstLabelMilliseconds == Self.none { firstLabelMilliseconds = milliseconds }
                if speaker != lastSpeaker { lastChangeMilliseconds = milliseconds }
            }
            lastSpeaker = speaker
        }
    }

    private let sampleCapacity: Int
    private var entries: [WordID: Entry] = [:]
    /// The measured words, so one can be replaced at random.
    private var sampledIDs: [WordID] = []
    /// Distinct words that arrived (measured or not): the reservoir's n.
    private var arrivedCount = 0
    private var random = SeededRandom(seed: 0x5EED_1A7E_0C1E)
    private var speakerLabels: [String] = []
    private var speakerIndex: [String: Int32] = [:]
    /// Measured words whose audio has not fully arrived yet: (end on the timeline, id), sorted by end.
    /// A word dropped from the sample may linger here until its audio comes or the list is compacted.
    private var waitingForAudio: [(endSeconds: Double, id: WordID)] = []
    private var audioEndSeconds = 0.0

    init(sampleCapacity: Int = LabelLatencyTracker.sampleCapacity) {
        self.sampleCapacity = max(1, sampleCapacity)
    }

    private static func milliseconds(_ seconds: Double) -> UInt32 {
        UInt32(clamping: Int((max(0, seconds) * 1000).rounded()))
    }

    private mutating func index(of speaker: String?) -> Int32 {
        guard let speaker else { return -1 }
        if let known = speakerIndex[speaker] { return known }
        let index = Int32(speakerLabels.count)
        speakerLabels.append(speaker)
        speakerIndex[speaker] = index
        return index
    }

    /// A `words` message arrived. A word id seen before (a volatile result replaced) keeps its first arrival.
    mutating func wordsArrived(_ words: [(id: WordID, endSeconds: Double)], at now: Double) {
        for word in words where entries[word.id] == nil {
            guard admit(word.id) else { continue }
            if word.endSeconds <= audioEndSeconds {
                entries[word.id]!.readyMilliseconds = Self.milliseconds(now)
            } else {
                let index = waitingForAudio.partitioningIndex { $0.endSeconds > word.endSeconds }
                waitingForAudio.insert((word.endSeconds, word.id), at: index)
            }
        }
        if waitingForAudio.count > 2 * sampleCapacity { waitingForAudio.removeAll { entries[$0.id] == nil } }
    }

    /// Algorithm R: the n-th distinct word is measured with probability capacity / n, replacing a
    /// measured word chosen at random. (A word that was once dropped and arrives again, as a replaced
    /// volatile result does, counts as a new arrival; that only nudges the sample.)
    private mutating func admit(_ id: WordID) -> Bool {
        arrivedCount += 1
        if sampledIDs.count < sampleCapacity {
            entries[id] = Entry(slot: Int32(sampledIDs.count))
            sampledIDs.append(id)
            return true
        }
        let pick = random.index(arrivedCount)
        guard pick < sampleCapacity else { return false }
        entries[sampledIDs[pick]] = nil
        sampledIDs[pick] = id
        entries[id] = Entry(slot: Int32(pick))
        return true
    }

    /// Audio up to `endSeconds` on the conversation timeline has arrived.
    mutating func audioArrived(upTo endSeconds: Double, at now: Double) {
        audioEndSeconds = max(audioEndSeconds, endSeconds)
        let ready = waitingForAudio.partitioningIndex { $0.endSeconds > audioEndSeconds }
        guard ready > 0 else { return }
        let milliseconds = Self.milliseconds(now)
        for item in waitingForAudio[..<ready] { entries[item.id]?.readyMilliseconds = milliseconds }
        waitingForAudio.removeFirst(ready)
    }

    /// The audio is complete (finalize or disconnect): words reaching past its end are as ready as they will be.
    mutating func audioEnded(at now: Double) {
        let milliseconds = Self.milliseconds(now)
        for item in waitingForAudio { entries[item.id]?.readyMilliseconds = milliseconds }
        waitingForAudio.removeAll()
    }

    /// A transcript update carrying these words went out.
    mutating func labelsSent(_ words: [(id: WordID, speaker: String?)], at now: Double) {
        let milliseconds = Self.milliseconds(now)
        for word in words where entries[word.id] != nil {
            let speaker = index(of: word.speaker)
            entries[word.id]!.noteLabel(speaker, at: milliseconds) // in place: no copy out and back
        }
    }

    /// A word that no longer exists (its result was replaced by fewer words) is not measured.
    mutating func wordsRemoved(_ ids: [WordID]) {
        let removed = Set(ids)
        for id in removed {
            guard let slot = entries.removeValue(forKey: id).map({ Int($0.slot) }) else { continue }
            // Swap-remove from the sample, moving the last measured word into the freed slot.
            let last = sampledIDs.removeLast()
            if slot < sampledIDs.count {
                sampledIDs[slot] = last
                entries[last]?.slot = Int32(slot)
            }
        }
        waitingForAudio.removeAll { removed.contains($0.id) }
    }

    /// Latencies of labelled words, in word-id order. A label that arrived before the word was ready
    /// (a device turn ahead of the audio) counts as zero.
    func latencies() -> (first: [Double], final: [Double]) {
        var first: [Double] = []
        var final: [Double] = []
        for id in entries.keys.sorted() {
            let entry = entries[id]!
            let ready = entry.readyMilliseconds, firstLabel = entry.firstLabelMilliseconds, lastChange = entry.lastChangeMilliseconds
            guard ready != Entry.none, entry.lastSpeaker >= 0, firstLabel != Entry.none, lastChange != Entry.none else { continue }
            first.append(Double(firstLabel > ready ? firstLabel - ready : 0) / 1000)
            final.append(Double(lastChange > ready ? lastChange - ready : 0) / 1000)
        }
        return (first, final)
    }

    /// Words being measured now (at most `sampleCapacity`).
    var measuredWordCount: Int { entries.count }

    /// Whether `id` is among the measured words.
    func isMeasured(_ id: WordID) -> Bool { entries[id] != nil }
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
