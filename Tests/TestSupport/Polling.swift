import Foundation

/// Waiting for something to happen in another thread or process. Tests wait for events this way,
/// bounded, and never assert how long anything took.
public enum Polling {
    /// Polls every 10 ms until `condition` holds or `seconds` pass; returns whether it held.
    @discardableResult
    public static func until(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }
}
