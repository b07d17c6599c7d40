import Foundation
import Logging
import StreamingDiarization

/// A session's overlap pass off its push path (speakerkit's): the audio goes to the runtime's
/// low-priority worker, which feeds the session's `OverlapTracker` (each 10 s window a segmentation run
/// of about 50 ms), so a push returns as soon as the diarizer is done with it and labels never wait for
/// the segmentation. At finalize the session's audio still waiting is segmented on the finalizing
/// thread itself: finalize waits for at most the one piece the worker is running, never for the other
/// sessions' queue ahead of it. The worker is idle-class (`LowPriorityWorker`); while anyone waits on
/// it here it runs at nice 10 instead, so a wait never lasts as long as the machine stays busy.
///
/// When more than `maximumBacklogSeconds` of this session's audio waits for the worker:
/// - a session streaming faster than real time (an upload, `eval --speed 0`) waits in `push` until the
///   worker catches up: it pays for its own segmentation, and keeps the pass;
/// - a real-time session gives the pass up (logged; its turns stay one speaker at a time), because the
///   machine is too busy to spare the worker anything and waiting would hold its labels back: it
///   degrades, it never holds labels or memory back.
///
/// `@unchecked Sendable`: `tracker` (and `finishedCount`, its windows already copied out) is used by one
/// thread at a time: a worker job while `isRunning`, or
/// `finish` after it has waited for `isRunning` to clear and set `isFinishing`; every other stored
/// property is read and written only with `condition` locked.
public final class BackgroundOverlapTracker: @unchecked Sendable {
    public static let maximumBacklogSeconds = 60.0
    private let tracker: OverlapTracker
    private let worker: LowPriorityWorker
    private let logger: Logger
    private let condition = NSCondition()
    /// Audio pushed and not yet given to the tracker, in order.
    private var pending: [[Float]] = []
    private var pendingSamples = 0
    private var isRunning = false
    private var isFinishing = false
    private var failureReason: String?
    /// Windows the worker has finished and the session's thread has not taken yet (`takeFinishedWindows`),
    /// copied out of `tracker` after each job so that thread never touches the tracker the worker feeds.
    private var untakenWindows: [LocalActivityWindow] = []
    /// `tracker.windows.count` when the last job ended; read and written by the job holding `isRunning`.
    private var finishedCount = 0

    public init(segmenter: any LocalActivitySegmenter, worker: LowPriorityWorker, logger: Logger) {
        tracker = OverlapTracker(segmenter: segmenter)
        self.worker = worker
        self.logger = logger
    }

    /// The windows finished live since the last call, in order, each once: for the live passes' count
    /// floor (`StreamingDiarizer.heard(_:)`). Empty once the pass is given up or finalize has begun.
    public func takeFinishedWindows() -> [LocalActivityWindow] {
        condition.lock()
        defer { condition.unlock() }
        let taken = failureReason == nil && !isFinishing ? untakenWindows : []
        untakenWindows = []
        return taken
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
        while failureReason == nil, pendingSamples + samples.count > limit {
            guard mayWait else {
                failureReason = "more than \(Int(Self.maximumBacklogSeconds)) s of a real-time session's audio waited for the segmentation"
                pending = []
                pendingSamples = 0
                break
            }
            worker.whileWaited { condition.wait() }
        }
        let accepted = failureReason == nil && !isFinishing
        if accepted {
            pending.append(samples)
            pendingSamples += samples.count
        }
        condition.unlock()
        if accepted { worker.enqueue { [self] in feedOne() } }
    }

    /// One worker job: the oldest piece still pending, if finalize has not taken it.
    private func feedOne() {
        condition.lock()
        guard !isFinishing, failureReason == nil, !pending.isEmpty else {
            condition.unlock()
            return
        }
        let samples = pending.removeFirst()
        isRunning = true
        condition.unlock()
        var failed: String?
        do { try tracker.push(samples) } catch { failed = "\(error)" }
        // Read while `isRunning` still holds the tracker for this thread; published under the lock.
        let newWindows = tracker.windows.count > finishedCount ? Array(tracker.windows[finishedCount...]) : []
        finishedCount = tracker.windows.count
        condition.lock()
        untakenWindows += newWindows
        isRunning = false
        pendingSamples -= samples.count
        if let failed { failureReason = failed }
        condition.broadcast()
        condition.unlock()
    }

    /// Segments what is still pending on this thread, then the rest; the windows, or nil when the
    /// pass was given up.
    public func finish() -> [LocalActivityWindow]? {
        condition.lock()
        isFinishing = true
        while isRunning { worker.whileWaited { condition.wait() } }
        let rest = pending
        pending = []
        pendingSamples = 0
        let failure = failureReason
        condition.broadcast()
        condition.unlock()
        if let failure {
            logger.warning("overlap pass given up; the session's turns stay one speaker at a time", metadata: ["reason": "\(failure)"])
            return nil
        }
        do {
            for samples in rest { try tracker.push(samples) }
            try tracker.finish()
        } catch {
            logger.warning("overlap pass failed at finalize", metadata: ["error": "\(error)"])
            return nil
        }
        return tracker.windows
    }
}
