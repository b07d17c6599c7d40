import Testing
@testable import SpeakerSyncKit

/// The SFSpeechRecognizer adapter's mapping, on values shaped like its segments (the Speech framework
/// half is not compiled here).
@Suite struct SpeechRecognizerTimelineTests {
    static func segment(_ text: String, _ timestamp: Double, _ duration: Double, confidence: Float = 0) -> SpeechRecognizerSegment {
        SpeechRecognizerSegment(substring: text, timestamp: timestamp, duration: duration, confidence: confidence)
    }

    /// `#require` of a mutating call does not compile (the macro passes the value as an immutable argument).
    static func unwrap<T>(_ value: T?, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
        try #require(value, sourceLocation: sourceLocation)
    }

    static func partial(_ segments: SpeechRecognizerSegment...) -> SpeechRecognizerResult {
        SpeechRecognizerResult(segments: segments, isFinal: false)
    }

    @Test func partialThenFinalResultsOfATaskShareOneResultIDAndEachRevisionIsOneMessage() throws {
        var timeline = SpeechRecognizerTimeline(taskStartSeconds: 12.5)
        let first = try Self.unwrap(timeline.revision(for: Self.partial(Self.segment("good", 0.4, 0.3))))
        let second = try Self.unwrap(timeline.revision(for: Self.partial(Self.segment("good", 0.4, 0.3), Self.segment("morning", 0.7, 0.45))))
        let final = try Self.unwrap(timeline.revision(for: SpeechRecognizerResult(
            segments: [Self.segment("Good", 0.42, 0.28, confidence: 0.75), Self.segment("morning.", 0.7, 0.45, confidence: 0.5)], isFinal: true)))
        #expect(first.resultID == "sf12500-0" && second.resultID == first.resultID && final.resultID == first.resultID)
        #expect(!first.isFinal && !second.isFinal && final.isFinal)
        #expect(second.words.map(\.text) == ["good", "morning"])
        #expect(final.words == [SpokenWord(text: "Good", startSeconds: 12.92, endSeconds: 12.92 + 0.28, confidence: 0.75),
                                SpokenWord(text: "morning.", startSeconds: 13.2, endSeconds: 13.2 + 0.45, confidence: 0.5)])
        #expect(timeline.isFinished)
        // Nothing of the task after its final result, and no second final from finish().
        #expect(timeline.revision(for: Self.partial(Self.segment("late", 2, 0.2))) == nil)
        #expect(timeline.finish() == nil)
    }

    @Test func wordTimesAreTheTasksTimesShiftedByWhereItsAudioBegan() throws {
        var timeline = SpeechRecognizerTimeline(taskStartSeconds: 0)
        let word = try Self.unwrap(timeline.revision(for: Self.partial(Self.segment("hi", 1.25, 0.5)))?.words.first)
        #expect(word.startSeconds == 1.25 && word.endSeconds == 1.75)
    }

    /// A task stops after about a minute; the next one's times start from 0 again and must continue
    /// the session's timeline, under ids of their own.
    @Test func aRestartedTaskContinuesTheTimeline() throws {
        var first = SpeechRecognizerTimeline(taskStartSeconds: 0)
        let last = try Self.unwrap(first.revision(for: SpeechRecognizerResult(segments: [Self.segment("before", 57.5, 0.5, confidence: 0.9)], isFinal: true)))
        var second = SpeechRecognizerTimeline(taskStartSeconds: 58.25)
        let next = try Self.unwrap(second.revision(for: Self.partial(Self.segment("after", 0.5, 0.25))))
        #expect(last.words.first?.startSeconds == 57.5)
        #expect(next.words.first?.startSeconds == 58.75 && next.words.first?.endSeconds == 59)
        #expect(next.resultID == "sf58250-0" && next.resultID != last.resultID)
    }

    @Test func confidenceIsPassedThroughAndAppleZeroIsAbsent() throws {
        var timeline = SpeechRecognizerTimeline(taskStartSeconds: 0)
        let words = try Self.unwrap(timeline.revision(for: Self.partial(
            Self.segment("sure", 0, 0.2, confidence: 0.875), Self.segment("maybe", 0.2, 0.2, confidence: 0),
            Self.segment("odd", 0.4, 0.2, confidence: 1.5), Self.segment("nan", 0.6, 0.2, confidence: .nan)))?.words)
        #expect(words.map(\.confidence) == [0.875, nil, nil, nil])
    }

    @Test func emptyAndRepeatedSegmentsAreLeftOutAndTimesTheServerRefusesAreMended() throws {
        var timeline = SpeechRecognizerTimeline(taskStartSeconds: 3)
        let words = try Self.unwrap(timeline.revision(for: Self.partial(
            Self.segment("", 0, 0.1), Self.segment("  ", 0.1, 0.1), Self.segment(" one ", 0.2, 0.3),
            Self.segment("one", 0.2, 0.3), // the same segment twice
            Self.segment("one", 0.6, 0.2), // the same word said again: kept
            Self.segment("neg", -0.1, 0.2), Self.segment("inf", .infinity, 0.2),
            Self.segment("short", 1, -0.5)))?.words)
        #expect(words.map(\.text) == ["one", "one", "short"])
        #expect(words.map(\.startSeconds) == [3.2, 3.6, 4])
        #expect(words.last?.endSeconds == 4) // a negative duration becomes 0: end ≥ start
    }

    @Test func aResultThatChangesNothingSendsNothing() throws {
        var timeline = SpeechRecognizerTimeline(taskStartSeconds: 0)
        let result = Self.partial(Self.segment("same", 0.1, 0.2))
        #expect(timeline.revision(for: result) != nil)
        #expect(timeline.revision(for: result) == nil) // delivered twice
        #expect(timeline.revision(for: Self.partial(Self.segment("", 0, 0))) != nil) // retracted: the empty revision replaces it
        // A task's first results with no words have nothing to replace.
        var fresh = SpeechRecognizerTimeline(taskStartSeconds: 0)
        #expect(fresh.revision(for: Self.partial()) == nil)
        #expect(fresh.revision(for: Self.partial(Self.segment(" ", 0, 0))) == nil)
    }

    /// Since iOS 17 or 18 a task closes an utterance at a pause (a result with metadata, not final) and
    /// goes on with a transcription of only what follows: that must not replace the closed utterance.
    @Test func anUtteranceClosedAtAPauseKeepsItsIDAndTheWordsAfterItGetTheNext() throws {
        var timeline = SpeechRecognizerTimeline(taskStartSeconds: 10)
        let open = try Self.unwrap(timeline.revision(for: Self.partial(Self.segment("hello", 0, 0.011))))
        let closing = SpeechRecognizerResult(segments: [Self.segment("Hello", 0.9, 0.4, confidence: 0.8)], isFinal: false, endsUtterance: true)
        let closed = try Self.unwrap(timeline.revision(for: closing))
        #expect(closed.resultID == open.resultID && closed.isFinal)
        #expect(timeline.revision(for: closing) == nil) // the same closing result again: the same utterance, nothing new
        let after = try Self.unwrap(timeline.revision(for: Self.partial(Self.segment("again", 0, 0.011))))
        #expect(after.resultID == "sf10000-1" && !after.isFinal && after.words.map(\.text) == ["again"])
        let final = try Self.unwrap(timeline.revision(for: SpeechRecognizerResult(segments: [Self.segment("again", 3.1, 0.3, confidence: 0.7)], isFinal: true)))
        #expect(final.resultID == "sf10000-1" && final.isFinal)
        #expect(timeline.utterance == 1)
    }

    @Test func finishCommitsTheOpenUtteranceOfATaskThatNeverSentAFinalResult() throws {
        var timeline = SpeechRecognizerTimeline(taskStartSeconds: 0)
        let open = try Self.unwrap(timeline.revision(for: Self.partial(Self.segment("cut", 0.1, 0.2))))
        let committed = try Self.unwrap(timeline.finish())
        #expect(committed.resultID == open.resultID && committed.words == open.words && committed.isFinal)
        #expect(timeline.finish() == nil && timeline.revision(for: Self.partial(Self.segment("late", 1, 0.1))) == nil)
        // An utterance already closed, or a task that said nothing, has nothing to commit.
        var closed = SpeechRecognizerTimeline(taskStartSeconds: 0)
        _ = closed.revision(for: SpeechRecognizerResult(segments: [Self.segment("done", 0, 0.2)], isFinal: false, endsUtterance: true))
        #expect(closed.finish() == nil)
        var silent = SpeechRecognizerTimeline(taskStartSeconds: 0)
        #expect(silent.finish() == nil)
    }

    @Test func withoutPartialResultsOnlyClosingResultsAndFinishAreSent() throws {
        var timeline = SpeechRecognizerTimeline(taskStartSeconds: 0, partialResults: false)
        #expect(timeline.revision(for: Self.partial(Self.segment("one", 0, 0.011))) == nil)
        let closed = try Self.unwrap(timeline.revision(for: SpeechRecognizerResult(segments: [Self.segment("One", 0.5, 0.3)], isFinal: false, endsUtterance: true)))
        #expect(closed.resultID == "sf0-0" && closed.isFinal)
        #expect(timeline.revision(for: Self.partial(Self.segment("two", 0, 0.011))) == nil)
        let committed = try Self.unwrap(timeline.finish()) // the task was cancelled: its last words still go
        #expect(committed.resultID == "sf0-1" && committed.words.map(\.text) == ["two"] && committed.isFinal)
    }

    @Test func resultIDsAreTheTaskStartInMillisecondsAndTheUtterance() {
        #expect(SpeechRecognizerTimeline.resultID(taskStartSeconds: 61.2345, utterance: 2) == "sf61235-2")
        #expect(SpeechRecognizerTimeline(taskStartSeconds: -1).taskStartSeconds == 0)
    }
}
