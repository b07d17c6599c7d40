import Foundation

/// One `SFSpeechRecognitionTask`'s results into a session: each result that changes something becomes
/// one `words` message, its times on the session's audio (`SpeechRecognizerTimeline` says how).
/// Make one per task, when the task's request is about to hear its first audio
/// (`SpeakerSyncSession.speechRecognizerFeed()`), and give it every result of that task; a task
/// restarted after a minute gets a feed of its own and continues the timeline.
///
/// `@unchecked Sendable`: the one mutable property, `timeline`, is only touched under `lock`
/// (SFSpeechRecognizer calls its result handler on a queue of its own, the app may call `finish()`
/// from another). Sending under the lock keeps each task's revisions in order on the session.
public final class SpeechRecognizerFeed: @unchecked Sendable {
    public let session: SpeakerSyncSession
    private let lock = NSLock()
    private var timeline: SpeechRecognizerTimeline

    /// - Parameters:
    ///   - taskStartSeconds: where the task's first audio lies on the session's audio.
    ///   - partialResults: false sends only results that close an utterance or the task (see
    ///     `SpeechRecognizerTimeline.partialResults`).
    public init(session: SpeakerSyncSession, taskStartSeconds: Double, partialResults: Bool = true) {
        self.session = session
        timeline = SpeechRecognizerTimeline(taskStartSeconds: taskStartSeconds, partialResults: partialResults)
    }

    public var taskStartSeconds: Double { timeline.taskStartSeconds }

    /// A result of this feed's task, read into a value on the thread that delivered it.
    public func send(_ result: SpeechRecognizerResult) {
        lock.withLock {
            if let revision = timeline.revision(for: result) { deliver(revision) }
        }
    }

    /// The task will deliver nothing more (it failed, was cancelled, or the app stopped feeding it):
    /// its open utterance is sent once more as final. A final result does this by itself.
    public func finish() {
        lock.withLock {
            if let revision = timeline.finish() { deliver(revision) }
        }
    }

    private func deliver(_ revision: SpeechRecognizerRevision) {
        session.send(words: revision.words, resultID: revision.resultID, isFinal: revision.isFinal)
    }
}

extension SpeakerSyncSession {
    /// A feed for a recognition task whose first audio is the next sample this session is given.
    /// Call it where the audio is fed (the tap), between two buffers, and give the new task's request
    /// the same buffers as the session from then on.
    public func speechRecognizerFeed(partialResults: Bool = true) -> SpeechRecognizerFeed {
        SpeechRecognizerFeed(session: self, taskStartSeconds: audioSecondsGiven, partialResults: partialResults)
    }
}
