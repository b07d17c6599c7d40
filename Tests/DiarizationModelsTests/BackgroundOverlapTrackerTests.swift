import DiarizationModels
import Foundation
import Logging
import StreamingDiarization
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A 1 s window of 100 Hz "audio" whose frame i (0.1 s) is the sample at its centre, rounded, as a mask.
final class CentreSampleSegmenter: LocalActivitySegmenter {
    var sampleRate: Int { 100 }
    var windowSamples: Int { 100 }
    var frameStepSeconds: Double { 0.1 }
    func centreSeconds(frame: Int) -> Double { 0.05 + 0.1 * Double(frame) }
    func activeMasks(_ window: [Float]) throws -> [UInt8] { (0 ..< 10).map { UInt8(window[$0 * 10 + 5].rounded()) } }
}

@Suite(.serialized) struct BackgroundOverlapTrackerTests {
    static let logger = Logger(label: "overlap") { _ in SwiftLogNoOpLogHandler() }
    static let audio: [Float] = (0 ..< 250).map { Float(($0 / 10) % 4) }

    /// A worker whose thread is inside a job (another session's) until `release` is signalled.
    static func busyWorker() -> (worker: LowPriorityWorker, release: DispatchSemaphore) {
        let worker = LowPriorityWorker(name: "test-low")
        let release = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        worker.enqueue {
            started.signal()
            release.wait()
        }
        started.wait()
        return (worker, release)
    }

    @Test func theWorkerRunsJobsInOrderBelowTheSessionsPriority() {
        let worker = LowPriorityWorker(name: "test-low")
        let seen = Mutex<[Int]>([])
        let nice = Mutex<Int32?>(nil)
        let policy = Mutex<Int32?>(nil)
        let done = DispatchSemaphore(value: 0)
        for index in 0 ..< 50 { worker.enqueue { seen.withLock { $0.append(index) } } }
        worker.enqueue {
            errno = 0
            nice.withLock { $0 = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
            policy.withLock { $0 = sched_getscheduler(0) }
            done.signal()
        }
        done.wait()
        #expect(seen.withLock { $0 } == Array(0 ..< 50))
        #expect(nice.withLock { $0 } == LowPriorityWorker.niceValue)
        #expect(policy.withLock { $0 } == LowPriorityWorker.idlePolicy)
    }

    /// While a thread waits on the worker it is not idle-class (no priority inversion), and it is again
    /// once the last waiter has gone.
    @Test func aWaitedOnWorkerLeavesTheIdleClassUntilTheLastWaiterGoes() {
        let worker = LowPriorityWorker(name: "test-low")
        let done = DispatchSemaphore(value: 0)
        worker.enqueue { done.signal() }
        done.wait()
        #expect(worker.currentPolicy == LowPriorityWorker.idlePolicy)
        worker.whileWaited {
            #expect(worker.currentPolicy == LowPriorityWorker.otherPolicy)
            worker.whileWaited { #expect(worker.currentPolicy == LowPriorityWorker.otherPolicy) }
            #expect(worker.currentPolicy == LowPriorityWorker.otherPolicy, "another waiter still waits")
        }
        #expect(worker.currentPolicy == LowPriorityWorker.idlePolicy)
        // A job run while waited on sees the normal policy.
        let seen = Mutex<Int32?>(nil)
        worker.whileWaited {
            worker.enqueue {
                seen.withLock { $0 = sched_getscheduler(0) }
                done.signal()
            }
            done.wait()
        }
        #expect(seen.withLock { $0 } == LowPriorityWorker.otherPolicy)
    }

    /// Pushes the test audio into `background` in pieces of `pieceSamples`, and the same pieces into a
    /// tracker fed on this thread, which it returns finished: what `background` must give.
    static func feed(_ background: BackgroundOverlapTracker, pieceSamples: Int) throws -> OverlapTracker {
        let direct = OverlapTracker(segmenter: CentreSampleSegmenter())
        for start in stride(from: 0, to: audio.count, by: pieceSamples) {
            let piece = Array(audio[start ..< min(audio.count, start + pieceSamples)])
            background.push(piece)
            try direct.push(piece)
        }
        try direct.finish()
        return direct
    }

    /// Off the push path, the windows are those the tracker gives when fed on the caller's thread.
    @Test func windowsEqualTheSynchronousTrackers() throws {
        let background = BackgroundOverlapTracker(segmenter: CentreSampleSegmenter(), worker: LowPriorityWorker(name: "test-low"), logger: Self.logger)
        let direct = try Self.feed(background, pieceSamples: 7)
        let windows = try #require(background.finish())
        #expect(windows == direct.windows)
        #expect(windows.count == 3)
    }

    /// The windows the worker finishes reach the session's thread live (the live passes' count floor),
    /// in order and each once, and none once finalize has begun.
    @Test func finishedWindowsAreHandedOutLiveEachOnce() throws {
        let worker = LowPriorityWorker(name: "test-low")
        let background = BackgroundOverlapTracker(segmenter: CentreSampleSegmenter(), worker: worker, logger: Self.logger)
        let direct = try Self.feed(background, pieceSamples: 7)
        // The worker runs jobs in order: once this one has run, every piece pushed before it has been segmented.
        let drained = DispatchSemaphore(value: 0)
        worker.enqueue { drained.signal() }
        drained.wait()
        // 2.5 windows of audio: two are whole; the third is padded and segmented only at finish.
        #expect(background.takeFinishedWindows() == Array(direct.windows.prefix(2)))
        #expect(background.takeFinishedWindows().isEmpty, "each window is handed out once")
        // One more whole window, finished live and not taken before finalize: finalize has it, no live taker.
        background.push([Float](repeating: 1, count: 100))
        worker.enqueue { drained.signal() }
        drained.wait()
        let windows = try #require(background.finish())
        #expect(Array(windows.prefix(2)) == Array(direct.windows.prefix(2)))
        #expect(windows.count == 4)
        #expect(background.takeFinishedWindows().isEmpty, "finalize has the windows now")
    }

    /// Finalize does not wait behind other sessions' queued work: with the worker busy elsewhere, the
    /// session's pending audio is segmented on the finalizing thread, with the same windows.
    @Test func finishSegmentsWhatIsPendingItselfInsteadOfWaitingForTheQueue() throws {
        let (worker, release) = Self.busyWorker()
        let background = BackgroundOverlapTracker(segmenter: CentreSampleSegmenter(), worker: worker, logger: Self.logger)
        let direct = try Self.feed(background, pieceSamples: 30)
        let windows = try #require(background.finish())   // returns while the worker is still blocked
        release.signal()
        #expect(windows == direct.windows)
    }

    /// A worker that cannot keep up: past the backlog allowance the pass is given up for the session
    /// (finish says so with nil), and nothing more is queued for it.
    @Test func aWorkerTooFarBehindGivesThePassUp() {
        let (worker, release) = Self.busyWorker()
        let background = BackgroundOverlapTracker(segmenter: CentreSampleSegmenter(), worker: worker, logger: Self.logger)
        let second = [Float](repeating: 1, count: 100)
        for _ in 0 ..< Int(BackgroundOverlapTracker.maximumBacklogSeconds) { background.push(second) }
        #expect(background.failure == nil)
        background.push(second)
        #expect(background.failure != nil)
        let queued = worker.waitingCount
        background.push(second)
        #expect(worker.waitingCount == queued)
        release.signal()
        #expect(background.finish() == nil)
    }

    /// A session faster than real time waits for the worker instead, and keeps the pass.
    @Test func aFastSessionWaitsForTheWorkerAndKeepsThePass() throws {
        let (worker, release) = Self.busyWorker()
        let background = BackgroundOverlapTracker(segmenter: CentreSampleSegmenter(), worker: worker, logger: Self.logger)
        let second = [Float](repeating: 1, count: 100)
        for _ in 0 ..< Int(BackgroundOverlapTracker.maximumBacklogSeconds) { background.push(second, mayWait: true) }
        let pushed = Mutex(false)
        let thread = Thread {
            background.push(second, mayWait: true)
            pushed.withLock { $0 = true }
        }
        thread.start()
        Thread.sleep(forTimeInterval: 0.2)
        #expect(pushed.withLock { $0 } == false, "the push past the backlog waits")
        release.signal()
        // The session's next call (finalize) comes after its push returned, as on a session's queue.
        for _ in 0 ..< 500 where !pushed.withLock({ $0 }) { Thread.sleep(forTimeInterval: 0.01) }
        #expect(pushed.withLock { $0 })
        let windows = try #require(background.finish())
        #expect(background.failure == nil)
        #expect(windows.count == Int(BackgroundOverlapTracker.maximumBacklogSeconds) + 1)
    }
}
