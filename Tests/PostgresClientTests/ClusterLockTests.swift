import Foundation
import Testing
@testable import PostgresClient

/// The folder lock's release, against a copy of its descriptor such as a child being spawned holds
/// until its exec.
@Suite struct ClusterLockTests {
    static func lockPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("clusterlock-\(UUID().uuidString.prefix(8)).lock").path
    }

    @Test func aReleasedLockIsFreeEvenWhileACopyOfItsDescriptorIsOpen() throws {
        let path = Self.lockPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard case .acquired(let first) = try ClusterLock.tryAcquire(path: path) else {
            Issue.record("a fresh lock file was held")
            return
        }
        // What a child spawned by another thread holds between its fork and its exec.
        let copy = dup(first.descriptor)
        #expect(copy >= 0)
        defer { close(copy) }
        guard case .held(let ownerPID) = try ClusterLock.tryAcquire(path: path) else {
            Issue.record("a second owner took a lock that is held")
            return
        }
        #expect(ownerPID == getpid())

        first.release()
        #expect(first.descriptor == -1)
        guard case .acquired(let second) = try ClusterLock.tryAcquire(path: path) else {
            Issue.record("the released lock stayed held by the copy of its descriptor")
            return
        }
        second.release()
        second.release()   // safe twice
        #expect(second.descriptor == -1)
    }
}
