/// A stretch of a conversation's audio to store (`store_audio`): 16-bit mono samples placed on the
/// conversation timeline. The writer compresses it (FLAC) when it builds its transaction, off the
/// session's queue.
public struct AudioChunkRecord: Sendable, Equatable {
    /// Where it starts on the conversation timeline, in samples at `sampleRate`.
    public var startSample: Int64
    public var sampleRate: Int
    public var samples: [Int16]

    public init(startSample: Int64, sampleRate: Int, samples: [Int16]) {
        self.startSample = startSample
        self.sampleRate = sampleRate
        self.samples = samples
    }
}

/// A stored chunk as read back: still compressed.
public struct StoredAudioChunk: Sendable, Equatable {
    public var startSample: Int64
    public var sampleRate: Int
    public var sampleCount: Int
    /// A complete FLAC stream of the chunk's samples.
    public var flac: [UInt8]

    public init(startSample: Int64, sampleRate: Int, sampleCount: Int, flac: [UInt8]) {
        self.startSample = startSample
        self.sampleRate = sampleRate
        self.sampleCount = sampleCount
        self.flac = flac
    }
}
