/// The session's audio as frames on its own sample timeline (sample 0 is the first sample the app
/// gave), kept until a resume no longer needs it: after a drop the server says how much audio it had
/// stored, and everything from there is sent again. Bounded: beyond `capacitySamples` the oldest
/// frames go (and are counted), so a long outage costs at most that much memory.
public struct AudioRetention: Sendable {
    public struct Frame: Sendable, Equatable {
        public var startSample: Int64
        public var sampleCount: Int
        public var bytes: [UInt8]
    }

    /// A frame as held: its bytes in memory, or their place in the spool.
    struct Held: Sendable {
        var startSample: Int64
        var sampleCount: Int
        var bytes: [UInt8]
        var spooled: AudioSpool.Location?
    }

    /// Bytes per sample for PCM (frames may then be cut mid-frame); nil for packets (Opus), which are
    /// resent whole from the one containing the resume point.
    public let bytesPerSample: Int?
    public let capacitySamples: Int64
    private var frames: [Held] = []
    private var head = 0 // frames[..<head] are dropped; compacted now and then
    public private(set) var totalSamples: Int64 = 0
    /// Samples dropped because the retention was full (audio a resume could no longer resend).
    public private(set) var droppedSamples: Int64 = 0

    /// On disk when set (`SpeakerSyncSessionConfig.spoolDirectory`), else in memory.
    let spool: AudioSpool?

    public init(bytesPerSample: Int?, capacitySamples: Int64, spool: AudioSpool? = nil) {
        self.bytesPerSample = bytesPerSample
        self.capacitySamples = max(1, capacitySamples)
        self.spool = spool
    }

    /// The first sample still held (== totalSamples when empty).
    public var firstRetainedSample: Int64 { head < frames.count ? frames[head].startSample : totalSamples }

    public var retainedSamples: Int64 { totalSamples - firstRetainedSample }

    /// Appends a frame of `sampleCount` samples; returns it (with its place on the timeline).
    @discardableResult
    public mutating func append(_ bytes: [UInt8], sampleCount: Int) -> Frame {
        let frame = Frame(startSample: totalSamples, sampleCount: sampleCount, bytes: bytes)
        // A spool that cannot be written (disk full) keeps the frame in memory instead of losing it.
        if let spool, let location = try? spool.write(bytes, startSample: totalSamples) {
            frames.append(Held(startSample: totalSamples, sampleCount: sampleCount, bytes: [], spooled: location))
        } else {
            frames.append(Held(startSample: totalSamples, sampleCount: sampleCount, bytes: bytes, spooled: nil))
        }
        totalSamples += Int64(sampleCount)
        while retainedSamples > capacitySamples, head < frames.count - 1 {
            droppedSamples += Int64(frames[head].sampleCount)
            forget(head)
            head += 1
        }
        if head > 1024, head * 2 > frames.count {
            frames.removeFirst(head)
            head = 0
        }
        return frame
    }

    /// Frees the frames that end at or before `sample` (the server has them stored for good).
    public mutating func release(before sample: Int64) {
        while head < frames.count, frames[head].startSample + Int64(frames[head].sampleCount) <= sample {
            forget(head)
            head += 1
        }
    }

    private mutating func forget(_ index: Int) {
        frames[index].bytes = []
        if let location = frames[index].spooled {
            spool?.release(location)
            frames[index].spooled = nil
        }
    }

    /// The frames to send again so the server gets every sample from `sample` on. PCM frames are cut at
    /// `sample`; a packet frame containing it is sent whole (its start is then before `sample`).
    /// `startSample` of the result is where the first returned frame begins: after `sample` when the
    /// retention no longer holds it (a gap the caller must place on the timeline itself).
    public func frames(from sample: Int64) -> (startSample: Int64, frames: [Frame]) {
        var out: [Frame] = []
        for index in head..<frames.count {
            let held = frames[index]
            let end = held.startSample + Int64(held.sampleCount)
            guard end > sample else { continue }
            var frame = Frame(startSample: held.startSample, sampleCount: held.sampleCount,
                              bytes: held.spooled.map { spool?.read($0) ?? [] } ?? held.bytes)
            if frame.startSample < sample, let bytesPerSample {
                let skip = Int(sample - frame.startSample)
                frame = Frame(startSample: sample, sampleCount: frame.sampleCount - skip,
                              bytes: Array(frame.bytes[(skip * bytesPerSample)...]))
            }
            out.append(frame)
        }
        return (out.first?.startSample ?? totalSamples, out)
    }
}
