import Foundation

/// A thread that lives until `finish()`, to start child processes from.
///
/// Linux sends a child's parent-death signal when the *thread* that spawned it exits, not the
/// process. `speakersync serve` under tests and fault runs sets one (SPEAKERSYNC_EXIT_WITH_PARENT),
/// and so does the embedded PostgreSQL it starts; started from a Dispatch or concurrency thread,
/// which ends after a few idle seconds, the server would be told to stop in the middle of a run.
///
/// `@unchecked Sendable`: `jobs` and `finished` are read and written only with `condition` locked.
public final class ParentThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [() -> Void] = []
    private var finished = false

    public init() {
        let thread = Thread { [self] in serve() }
        thread.name = "speakersync.parent-thread"
        thread.start()
    }

    /// Runs `work` on the thread and returns its result.
    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            jobs.append { continuation.resume(with: Result { try work() }) }
            condition.signal()
            condition.unlock()
        }
    }

    /// One that lives as long as the process, for callers that spawn children from anywhere.
    public static let processLifetime = ParentThread()

    /// Runs `work` on the thread and waits for it (from synchronous code; never from this thread).
    public func runAndWait<T>(_ work: @escaping @Sendable () throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        condition.lock()
        jobs.append {
            box.result = Result { try work() }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        return try box.result!.get()
    }

    /// Lets the thread end once its queued work is done (children started from it then get their
    /// parent-death signal).
    public func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty && !finished { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}

/// Carries a result from the parent thread to the waiting caller (written before the semaphore is
/// signalled, read after it is waited on).
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
