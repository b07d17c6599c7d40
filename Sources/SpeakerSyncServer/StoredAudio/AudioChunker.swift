import SpeakerSyncAudio
import SpeakerSyncStore

/// Cuts a session's audio into chunks for storage (`store_audio`): 16-bit samples at the device's
/// sample rate, `chunkSeconds` each (the last shorter), placed on the conversation timeline. 16-bit
/// PCM from the device comes back bit-exact (the server's /32768 and ×32768 are inverses); float
/// PCM is rounded to 16 bits and Opus is kept as decoded. Pure: the session owns one and stores
/// what it returns.
struct AudioChunker {
    let sampleRate: Int
    let chunkSamples: Int
    /// Where the next chunk starts on the conversation timeline, in samples at `sampleRate`.
    private(set) var nextStartSample: Int64
    private var pending: [Int16] = []

    init(sampleRate: Int, timelineOffsetSeconds: Double, chunkSeconds: Double = 10) {
        self.sampleRate = sampleRate
        chunkSamples = max(1, Int((chunkSeconds * Double(sampleRate)).rounded()))
        nextStartSample = Int64((timelineOffsetSeconds * Double(sampleRate)).rounded())
        pending.reserveCapacity(chunkSamples)
    }

    /// The chunks `samples` completed.
    mutating func append(_ samples: [Float]) -> [AudioChunkRecord] {
        var chunks: [AudioChunkRecord] = []
        for sample in samples {
            pending.append(PCMDecoding.quantizeS16(sample))
            if pending.count == chunkSamples, let chunk = flush() { chunks.append(chunk) }
        }
        return chunks
    }

    /// What is left, as a last (shorter) chunk; nil when nothing is.
    mutating func flush() -> AudioChunkRecord? {
        guard !pending.isEmpty else { return nil }
        let chunk = AudioChunkRecord(startSample: nextStartSample, sampleRate: sampleRate, samples: pending)
        nextStartSample += Int64(pending.count)
        pending.removeAll(keepingCapacity: true)
        return chunk
    }
}
