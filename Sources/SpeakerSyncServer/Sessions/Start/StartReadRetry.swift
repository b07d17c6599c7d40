import Foundation
import PostgresClient

/// Retrying a start's read while PostgreSQL may come back, until the start's deadline.
enum StartReadRetry {
    /// Connection loss, a statement past its deadline, no free pooled connection, or a server
    /// starting up or shutting down: what waiting can fix.
    static func isTransient(_ error: any Error) -> Bool {
        (error as? PGError)?.isTransient ?? false
    }

    static func run<T>(until deadline: ContinuousClock.Instant, _ read: () throws -> T) -> Result<T, any Error> {
        var backoffSeconds = 0.1
        while true {
            do {
                return .success(try read())
            } catch {
                let remaining = (deadline - ContinuousClock.now).seconds
                guard isTransient(error), remaining > backoffSeconds else { return .failure(error) }
                Thread.sleep(forTimeInterval: backoffSeconds)
                backoffSeconds = min(backoffSeconds * 2, 1)
            }
        }
    }
}
