import Dispatch

/// Runs blocking work (starting a server process, stopping PostgreSQL) on a thread of its own instead
/// of Swift concurrency's cooperative pool, which has one thread per core: two cores blocked for
/// seconds would starve every other test's tasks (their sessions would time out).
public enum Blocking {
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
