import Foundation
import Logging
import StreamingDiarization

/// A session's overlap pass off its push path (speakerkit's): the audio goes to the runtime's
/// low-priority worker, which feeds the session's `OverlapTracker` (each 10 s window a segmentation run
/// of about 50 ms), so a push returns as soon as the diarizer is done with it and labels never wait for
/// the segmentation. Finalize waits for the windows still queued.
///
/// When more than `maximumBacklogSeconds` of this session's audio waits for the worker:
/// - a session streaming faster than real time (an upload, `eval --speed 0`) waits in `push` until the
///   worker catches up: it pays for its own segmentation, and keeps the pass;
/// - a real-time session gives the pass up (logged; its turns stay one speaker at a time), because the
///   machine is too busy to spare the worker anything and waiting would hold its labels back: it
///   degrades, it never holds labels or memory back.
///
/// `@unchecked Sendable`: `tracker` is touched only by jobs on the worker (one thread, in queue order)
/// and by `finish` after it has waited for every earlier job; `queuedSamples` and `failure` only with
/// `condition` locked.
public final class BackgroundOverlapTracker: @unchecked Sendable {
    public static let maximumBacklogSeconds = 60.0
    private let tracker: OverlapTracker
    private let worker: LowPriorityWorker
    private let logger: Logger
    private let condition = NSCondition()
    private var queuedSamples = 0
    private var failureReason: String?

    public init(segmenter: any LocalActivitySegmenter, worker: LowPriorityWorker, logger: Logger) {
        tracker = OverlapTracker(segmenter: segmenter)
        self.worker = worker
        self.logger = logger
    }

    /// Why the pass was given up for this session (nil while it runs).
    public var failure: String? {
        condition.lock()
        defer { condition.unlock() }
        return failureReason
    }

    /// `mayWait`: the session streams faster than real time, so it waits for the worker rather than
    /// giving the pass up when the backlog is full.
    public func push(_ samples: [Float], mayWait: Bool = false) {
        let limit = max(samples.count, Int(Self.maximumBacklogSeconds * Double(tracker.segmenter.sampleRate)))
        condition.lock()
        while failureReason == nil, queuedSamples + samples.count > limit {
            guard mayWait else {
                failureReason = "more than \(Int(Self.maximumBacklogSeconds)) s of a real-time session's audio waited for the segmentation"
                break
            }
            condition.wait()
        }
        let accepted = failureReason == nil
        if accepted { queuedSamples += samples.count }
        condition.unlock()
        guard accepted else { return }
        worker.enqueue { [self] in
            condition.lock()
            let skip = failureReason != nil
            condition.unlock()
            if !skip {
                do {
                    try tracker.push(samples)
                } catch {
                    condition.lock()
                    failureReason = "\(error)"
                    condition.unlock()
                }
            }
            condition.lock()
            queuedSamples -= samples.count
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits for the queued audio, segments the rest; the windows, or nil when the pass was given up.
    public func finish() -> [LocalActivityWindow]? {
        let done = DispatchSemaphore(value: 0)
        worker.enqueue { done.signal() }
        done.wait()
        if let failure {
            logger.warning("overlap pass given up; the session's turns stay one speaker at a time", metadata: ["reason": "\(failure)"])
            return nil
        }
        do {
            try tracker.finish()
        } catch {
            logger.warning("overlap pass failed at finalize", metadata: ["error": "\(error)"])
            return nil
        }
        return tracker.windows
    }
}
