import Testing
import WebSocketTransport

/// The end-to-end tests' reader of a connection: a connection that never ends fails its test
/// instead of hanging the run (CI has 90 minutes for everything).
@Suite struct SessionRecordingTests {
    @Test func aConnectionThatNeverEndsFailsTheTestWithWhatItReceived() async {
        let (events, continuation) = AsyncStream<WebSocketClientEvent>.makeStream()
        continuation.yield(.connected)
        continuation.yield(.message(.text(#"{"type":"session"}"#)))
        var recording = SessionRecording()
        await withKnownIssue {
            recording = await SessionRecording.record(events, timeoutSeconds: 1)
        }
        #expect(recording.texts == [#"{"type":"session"}"#])
        #expect(recording.closeCode == nil)
        continuation.finish()
    }

    @Test func aConnectionThatEndsIsRecordedToItsClose() async {
        let (events, continuation) = AsyncStream<WebSocketClientEvent>.makeStream()
        continuation.yield(.connected)
        continuation.yield(.message(.text(#"{"type":"session"}"#)))
        continuation.yield(.disconnected(code: 1000, reason: "done"))
        continuation.finish()
        let recording = await SessionRecording.record(events)
        #expect(recording.texts == [#"{"type":"session"}"#] && recording.closeCode == 1000 && recording.closeReason == "done")
    }
}
