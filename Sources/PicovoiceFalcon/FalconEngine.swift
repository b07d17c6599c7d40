import CPicovoiceFalcon

/// One Falcon engine object (pv_falcon_t), deleted in deinit. Creating one validates the AccessKey
/// (Picovoice activates online), so engines are made once and reused: `FalconEnginePool` lends them to
/// sessions. Falcon diarizes a whole recording per `process` call and keeps nothing between calls.
///
/// Not thread-safe: one thread at a time (the pool's borrower).
public final class FalconEngine {
    public let library: FalconLibrary
    private let object: OpaquePointer
    private let accessKey: String

    /// Every error is redacted of the key before it leaves.
    public init(library: FalconLibrary, accessKey: String, modelPath: String, device: String) throws(FalconError) {
        self.library = library
        self.accessKey = accessKey
        var created: OpaquePointer?
        let status = accessKey.withCString { key in
            modelPath.withCString { model in
                device.withCString { device in library.initialize(key, model, device, &created) }
            }
        }
        do {
            try library.check(status, "pv_falcon_init")
        } catch {
            throw error.redacting(accessKey)
        }
        guard let created else { throw FalconError(.runtimeError, "pv_falcon_init succeeded without an object") }
        object = created
    }

    deinit {
        library.delete(object)
    }

    /// Speaker segments of `samples` (16 kHz mono float in [-1, 1], converted to 16-bit PCM), in
    /// seconds from the first sample. Tags are this call's own.
    public func process(_ samples: UnsafeBufferPointer<Float>) throws(FalconError) -> [FalconSegment] {
        guard !samples.isEmpty else { return [] }
        guard samples.count <= Int(Int32.max) else { throw FalconError(.invalidArgument, "\(samples.count) samples is more than one call takes") }
        let pcm = samples.map { Int16(max(-32768, min(32767, ($0 * 32768).rounded()))) }
        var count: Int32 = 0
        var segments: UnsafeMutablePointer<pv_segment_t>?
        let status = pcm.withUnsafeBufferPointer { library.process(object, $0.baseAddress, Int32(pcm.count), &count, &segments) }
        do {
            try library.check(status, "pv_falcon_process")
        } catch {
            throw error.redacting(accessKey)
        }
        guard let segments else { return [] }
        defer { library.deleteSegments(segments) }
        return (0 ..< Int(max(0, count))).map {
            FalconSegment(startSeconds: Double(segments[$0].start_sec), endSeconds: Double(segments[$0].end_sec), speakerTag: Int(segments[$0].speaker_tag))
        }
    }
}

/// One segment of a Falcon result.
public struct FalconSegment: Sendable, Equatable {
    public var startSeconds: Double
    public var endSeconds: Double
    public var speakerTag: Int

    public init(startSeconds: Double, endSeconds: Double, speakerTag: Int) {
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
        self.speakerTag = speakerTag
    }
}
