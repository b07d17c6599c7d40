import Foundation
import Logging
import StreamingDiarization
import Synchronization

/// A session's overlap pass off its push path (speakerkit's): the audio goes to the runtime's low-priority worker,
/// which feeds the session's `OverlapTracker` (each 10 s window a segmentation run of about 50 ms), so
/// a push returns as soon as the diarizer is done with it and labels never wait for the segmentation.
/// Finalize waits for the windows still queued. When more than `maximumBacklogSeconds` of this session's
/// audio waits (a machine too busy to spare the worker anything), the pass is dropped for the session,
/// logged, and its turns stay one speaker at a time: it degrades, it never holds labels or memory back.
///
/// `@unchecked Sendable`: `tracker` is touched only by jobs on the worker (one thread, in queue order)
/// and by `finish` after it has waited for every earlier job; the rest is behind `state`'s Mutex.
public final class BackgroundOverlapTracker: @unchecked Sendable {
    public static let maximumBacklogSeconds = 60.0
    private let tracker: OverlapTracker
    private let worker: LowPriorityWorker
    private let logger: Logger
    private struct State {
        var queuedSamples = 0
        var failure: String?
    }
    private let state = Mutex(State())

    public init(segmenter: any LocalActivitySegmenter, worker: LowPriorityWorker, logger: Logger) {
        tracker = OverlapTracker(segmenter: segmenter)
        self.worker = worker
        self.logger = logger
    }

    /// Why the pass was given up for this session (nil while it runs).
    public var failure: String? { state.withLock { $0.failure } }

    public func push(_ samples: [Float]) {
        let limit = Int(Self.maximumBacklogSeconds * Double(tracker.segmenter.sampleRate))
        let accepted = state.withLock { state -> Bool in
            guard state.failure == nil else { return false }
            guard state.queuedSamples + samples.count <= limit else {
                state.failure = "more than \(Int(Self.maximumBacklogSeconds)) s of audio waited for the segmentation"
                return false
            }
            state.queuedSamples += samples.count
            return true
        }
        guard accepted else { return }
        worker.enqueue { [self] in
            let skip = state.withLock { state -> Bool in
                state.queuedSamples -= samples.count
                return state.failure != nil
            }
            guard !skip else { return }
            do {
                try tracker.push(samples)
            } catch {
                state.withLock { $0.failure = "\(error)" }
            }
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
