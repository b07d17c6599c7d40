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

    /// Bytes per sample for PCM (frames may then be cut mid-frame); nil for packets (Opus), which are
    /// resent whole from the one containing the resume point.
    public let bytesPerSample: Int?
    public let capacitySamples: Int64
    public private(set) var frames: [Frame] = []
    private var head = 0 // frames[..<head] are dropped; compacted now and then
    public private(set) var totalSamples: Int64 = 0
    /// Samples dropped because the retention was full (audio a resume could no longer resend).
    public private(set) var droppedSamples: Int64 = 0

    public init(bytesPerSample: Int?, capacitySamples: Int64) {
        self.bytesPerSample = bytesPerSample
        self.capacitySamples = max(1, capacitySamples)
    }

    /// The first sample still held (== totalSamples when empty).
    public var firstRetainedSample: Int64 { head < frames.count ? frames[head].startSample : totalSamples }

    public var retainedSamples: Int64 { totalSamples - firstRetainedSample }

    /// Appends a frame of `sampleCount` samples; returns it (with its place on the timeline).
    @discardableResult
    public mutating func append(_ bytes: [UInt8], sampleCount: Int) -> Frame {
        let frame = Frame(startSample: totalSamples, sampleCount: sampleCount, bytes: bytes)
        frames.append(frame)
        totalSamples += Int64(sampleCount)
        while retainedSamples > capacitySamples, head < frames.count - 1 {
            droppedSamples += Int64(frames[head].sampleCount)
            frames[head].bytes = []
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
            frames[head].bytes = []
            head += 1
        }
    }

    /// The frames to send again so the server gets every sample from `sample` on. PCM frames are cut at
    /// `sample`; a packet frame containing it is sent whole (its start is then before `sample`).
    /// `startSample` of the result is where the first returned frame begins: after `sample` when the
    /// retention no longer holds it (a gap the caller must place on the timeline itself).
    public func frames(from sample: Int64) -> (startSample: Int64, frames: [Frame]) {
        var out: [Frame] = []
        for index in head..<frames.count {
            var frame = frames[index]
            let end = frame.startSample + Int64(frame.sampleCount)
            guard end > sample else { continue }
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
