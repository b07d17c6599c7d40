import Foundation
import Synchronization
import Testing
@testable import SpeakerSyncServer

/// A finalize builds the session's end (every turn, every word's label, the stats: the heavy step)
/// only once the steps before it are committed, so the words sent with the stop get their update
/// first and do not share a commit with the end.
extension SessionRunnerTests {
    @Test func theEndIsQueuedOnlyOnceTheWordsBeforeItAreCommitted() async throws {
        let runner = makeRunner()
        start(runner)
        let session = try await transport.wait(for: runner.connection) { $0.contains { $0["type"] as? String == "session" } }
        let conversationID = try #require(session.first?["conversation_id"] as? String)
        runner.received(.binary(silence(seconds: 2)))
        store.holdCompletions.store(true, ordering: .relaxed)
        runner.received(.text(wordsMessage("last", [("goodbye", 1.2, 1.6)])))
        runner.received(.text(json(["type": "finalize"])))
        // The words' step is queued; while its commit is in flight the end is not built.
        try await waitUntil { store.persisted.withLock { $0.contains { $0.changedWords > 0 } } }
        try await Task.sleep(for: .milliseconds(300))
        #expect(store.persisted.withLock { $0.contains { $0.conversationEnded } } == false)
        #expect(transport.closeCode(runner.connection) == nil)

        store.releaseHeldCompletions()
        let messages = try await transport.wait(for: runner.connection) { _ in transport.closeCode(runner.connection) != nil }
        #expect(transport.closeCode(runner.connection) == 1000)
        let persisted = store.persisted.withLock { $0 }
        #expect(persisted.last?.conversationEnded == true)
        #expect(persisted.filter(\.conversationEnded).count == 1)
        // The words' own update (stored) went out before the final transcript.
        let transcripts = messages.filter { $0["type"] as? String == "transcript" }
        let firstWithWord = try #require(transcripts.firstIndex { message in
            (message["upserted"] as? [[String: Any]] ?? []).contains { ($0["words"] as? [[String: Any]] ?? []).contains { $0["text"] as? String == "goodbye" && $0["stored"] as? Bool == true } }
        })
        #expect(transcripts[firstWithWord]["final"] as? Bool == false)
        #expect(transcripts.last?["final"] as? Bool == true)
        #expect(store.conversations.withLock { $0[conversationID]?.state.status } == .finalized)
    }

    @Test func aTeardownWhileTheEndWaitsStoresTheConversationAsInterruptedOnce() async throws {
        let runner = makeRunner()
        start(runner)
        let session = try await transport.wait(for: runner.connection) { $0.contains { $0["type"] as? String == "session" } }
        let conversationID = try #require(session.first?["conversation_id"] as? String)
        store.holdCompletions.store(true, ordering: .relaxed)
        runner.received(.text(wordsMessage("last", [("goodbye", 0.2, 0.6)])))
        runner.received(.text(json(["type": "finalize"])))
        try await waitUntil { store.persisted.withLock { $0.contains { $0.changedWords > 0 } } }
        // The server stops while the finalize waits for the words' commit.
        let stopped = Mutex(false)
        runner.serverStopping { stopped.withLock { $0 = true } }
        try await waitUntil { store.persisted.withLock { $0.count >= 2 } }
        store.releaseHeldCompletions()
        try await waitUntil { stopped.withLock { $0 } }
        try await Task.sleep(for: .milliseconds(200))
        // One last step, the teardown's (interrupted); the waiting finalize did not add a finalized one.
        #expect(store.persisted.withLock { $0.filter(\.conversationEnded).count } == 0)
        #expect(store.conversations.withLock { $0[conversationID]?.state.status } == .interrupted)
    }

    /// Polls `condition` (bounded: 10 s) until it holds.
    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("condition not met within 10 s")
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
