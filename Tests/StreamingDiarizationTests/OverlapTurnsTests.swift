import Testing
@testable import StreamingDiarization

/// OverlapTurns on hand-built windows: 0.1 s frames, so frame i's centre is 0.05 + 0.1·i.
struct OverlapTurnsTests {
    typealias Span = OverlapTurns.Span

    /// A window of 0.1 s frames starting at `start` seconds, one mask per frame.
    static func window(_ masks: [UInt8], start: Double = 0) -> LocalActivityWindow {
        LocalActivityWindow(firstCentreSeconds: start + 0.05, frameStepSeconds: 0.1, activeMasks: masks)
    }

    static func rounded(_ spans: [Span]) -> [Span] {
        spans.map { Span(speaker: $0.speaker, startSeconds: ($0.startSeconds * 1000).rounded() / 1000, endSeconds: ($0.endSeconds * 1000).rounded() / 1000) }
    }

    /// Speaker 7 talks 0–1 s, speaker 3 talks 1–2 s; the model hears local 0 over 0–1.5 s and local 1
    /// over 0.8–2 s: 0.8–1.0 is 3's overlapped speech (under 7's turn), 1.0–1.5 is 7's (under 3's).
    @Test func overlappedFramesGoToTheMappedSpeakerTheTurnsLeaveOut() {
        let masks: [UInt8] = (0 ..< 20).map { frame in
            var mask: UInt8 = 0
            if frame < 15 { mask |= 1 }
            if frame >= 8 { mask |= 2 }
            return mask
        }
        let turns = [Span(speaker: 7, startSeconds: 0, endSeconds: 1), Span(speaker: 3, startSeconds: 1, endSeconds: 2)]
        let added = Self.rounded(OverlapTurns.added(to: turns, windows: [Self.window(masks)]))
        #expect(added == [Span(speaker: 3, startSeconds: 0.8, endSeconds: 1.0), Span(speaker: 7, startSeconds: 1.0, endSeconds: 1.5)])
    }

    /// Names are one-to-one and follow the evidence: local 1 covers speaker 3's turn most, so local 0
    /// (mostly under 3 too, but less) takes 7, the only one left.
    @Test func namesAreOneToOneLargestEvidenceFirst() {
        // local 0 alone in frames 0–3 (under 7: 0–1, under 3: 2–3), local 1 alone in frames 4–9 (under 3).
        let masks: [UInt8] = [1, 1, 1, 1, 2, 2, 2, 2, 2, 2]
        let covering: [[Int32]] = [[7], [7], [3], [3], [3], [3], [3], [3], [3], [3]]
        let names = OverlapTurns.localNames(window: Self.window(masks), covering: covering)
        #expect(names == [1: 3, 0: 7])
    }

    /// A local speaker heard only in overlap has no name, so nothing is added for them; a speaker already
    /// covering the frame gets nothing twice.
    @Test func unnamedLocalSpeakersAndCoveredSpeakersAddNothing() {
        let masks: [UInt8] = [1, 1, 1, 3, 3, 3]
        let turns = [Span(speaker: 1, startSeconds: 0, endSeconds: 0.6)]
        #expect(OverlapTurns.added(to: turns, windows: [Self.window(masks)]).isEmpty)
    }

    /// Speech no turn covers stays out unless asked for; then it goes to the named local speaker.
    @Test func missedSpeechIsFilledOnlyWhenAsked() {
        let masks: [UInt8] = [1, 1, 1, 1, 1, 0, 0]
        let turns = [Span(speaker: 2, startSeconds: 0, endSeconds: 0.3)]
        #expect(OverlapTurns.added(to: turns, windows: [Self.window(masks)]).isEmpty)
        let filled = Self.rounded(OverlapTurns.added(to: turns, windows: [Self.window(masks)], fillsMissedSpeech: true))
        #expect(filled == [Span(speaker: 2, startSeconds: 0.3, endSeconds: 0.5)])
    }

    /// Filling skips the frames inside a pause the loudness track hears (a turn's end the model carries
    /// into the silence after it), and fills the rest as before.
    @Test func missedSpeechIsNotFilledInsideAPause() {
        let masks: [UInt8] = [1, 1, 1, 1, 1, 1, 1, 0]
        let turns = [Span(speaker: 2, startSeconds: 0, endSeconds: 0.3)]
        let pauses = [SilenceTrim.Stretch(startSeconds: 0.3, endSeconds: 0.5)]
        let filled = Self.rounded(OverlapTurns.added(to: turns, windows: [Self.window(masks)], fillsMissedSpeech: true, outside: pauses))
        #expect(filled == [Span(speaker: 2, startSeconds: 0.5, endSeconds: 0.7)])
    }

    /// Each window names its own local speakers: local 0 is speaker 1 in the first window and speaker
    /// 2 in the second, and runs that continue across the windows' border become one span.
    @Test func everyWindowNamesItsOwnLocalSpeakers() {
        let first = Self.window([1, 1, 3, 3], start: 0)
        let second = Self.window([3, 3, 1, 1], start: 0.4)
        let turns = [Span(speaker: 1, startSeconds: 0, endSeconds: 0.4), Span(speaker: 2, startSeconds: 0.4, endSeconds: 0.8)]
        // Window 1: local 0 = speaker 1, local 1 unnamed (never alone). Window 2: local 0 alone under 2.
        let added = OverlapTurns.added(to: turns, windows: [first, second])
        #expect(added.isEmpty)
        let third = Self.window([2, 2, 3, 3, 1, 1], start: 0.8)
        let more = [Span(speaker: 5, startSeconds: 0.8, endSeconds: 1.0), Span(speaker: 6, startSeconds: 1.0, endSeconds: 1.4)]
        // Local 1 alone under 5, local 0 alone under 6: the overlap at 1.0–1.2 is 5's, under 6's turn.
        #expect(Self.rounded(OverlapTurns.added(to: turns + more, windows: [first, second, third]))
            == [Span(speaker: 5, startSeconds: 1.0, endSeconds: 1.2)])
    }

    /// Step 4: the local speakers left unnamed in every window are one new speaker, who gets their
    /// frames over others' speech once those add up to the minimum. Window A: local 1 talks over
    /// speaker 1 (0.3–0.5 s). Window B: both locals talk alone under speaker 1's turn, local 1 more, so
    /// local 0 (1.0–1.2 s) is the one left unnamed; local 2 alone where no turn is (1.6–1.8 s) is speech
    /// the VAD missed and does not count.
    @Test func unnamedLocalSpeakersBecomeOneNewSpeakerOnceTheirSpeechAddsUp() {
        let windows = [Self.window([1, 1, 1, 3, 3, 0, 0, 0, 0, 0]), Self.window([1, 1, 2, 2, 2, 2, 4, 4], start: 1.0)]
        let turns = [Span(speaker: 1, startSeconds: 0, endSeconds: 0.5), Span(speaker: 1, startSeconds: 1.0, endSeconds: 1.6)]
        let voice = { (minimum: Double) in OverlapTurns.OrphanVoice(speaker: 9, minimumSeconds: minimum) }
        #expect(Self.rounded(OverlapTurns.added(to: turns, windows: windows, orphanVoice: voice(0.4)))
            == [Span(speaker: 9, startSeconds: 0.3, endSeconds: 0.5), Span(speaker: 9, startSeconds: 1.0, endSeconds: 1.2)])
        #expect(OverlapTurns.added(to: turns, windows: windows, orphanVoice: voice(0.45)).isEmpty)
        #expect(OverlapTurns.added(to: turns, windows: windows).isEmpty, "without an orphan voice no speaker is created")
    }

    @Test func mergingJoinsOneSpeakersAdjacentSpansOnly() {
        let spans = [Span(speaker: 1, startSeconds: 0, endSeconds: 0.1), Span(speaker: 2, startSeconds: 0.1, endSeconds: 0.2),
                     Span(speaker: 1, startSeconds: 0.1, endSeconds: 0.2), Span(speaker: 1, startSeconds: 0.5, endSeconds: 0.6)]
        #expect(OverlapTurns.merged(spans, joiningGapsUpTo: 0.1) == [
            Span(speaker: 1, startSeconds: 0, endSeconds: 0.2), Span(speaker: 2, startSeconds: 0.1, endSeconds: 0.2),
            Span(speaker: 1, startSeconds: 0.5, endSeconds: 0.6),
        ])
    }
}

/// A segmenter whose "model" reports the window's own samples: frame i of a window is 0.1 s (10
/// samples at 100 Hz) and its mask is the sample at the frame's centre, rounded. Windows are 1 s.
final class ScriptedSegmenter: LocalActivitySegmenter {
    var sampleRate: Int { 100 }
    var windowSamples: Int { 100 }
    var frameStepSeconds: Double { 0.1 }
    private(set) var windowsSeen: [[Float]] = []
    func centreSeconds(frame: Int) -> Double { 0.05 + 0.1 * Double(frame) }
    func activeMasks(_ window: [Float]) throws -> [UInt8] {
        windowsSeen.append(window)
        return (0 ..< 10).map { UInt8(window[$0 * 10 + 5].rounded()) }
    }
}

struct OverlapTrackerTests {
    /// 2.5 s of audio whose sample value is the frame's mask: 0.1 s frame k carries k % 4.
    static let audio: [Float] = (0 ..< 250).map { Float(($0 / 10) % 4) }

    /// Without overlap between windows every frame comes from exactly one window, at its own time;
    /// the last, short window is padded with silence and only its real frames are kept.
    @Test func windowsTileTheSessionAndTheLastIsPadded() throws {
        let segmenter = ScriptedSegmenter()
        let tracker = OverlapTracker(segmenter: segmenter)
        for start in stride(from: 0, to: Self.audio.count, by: 7) { try tracker.push(Array(Self.audio[start ..< min(250, start + 7)])) }
        #expect(tracker.windows.count == 2)
        try tracker.finish()
        #expect(segmenter.windowsSeen.count == 3)
        #expect(segmenter.windowsSeen[2].suffix(50).allSatisfy { $0 == 0 })
        let frames = tracker.windows.flatMap { window in window.activeMasks.indices.map { (window.centreSeconds(frame: $0), window.activeMasks[$0]) } }
        #expect(frames.count == 25)
        for (index, frame) in frames.enumerated() {
            #expect(abs(frame.0 - (0.05 + 0.1 * Double(index))) < 1e-9)
            #expect(frame.1 == UInt8(index % 4))
        }
    }

    /// With a half-window step each frame is kept from the window where it lies in the middle half
    /// (the first window from its start, the last to the audio's end), still once per frame.
    @Test func overlappingWindowsKeepEachFrameOnceFromTheMiddle() throws {
        let tracker = OverlapTracker(segmenter: ScriptedSegmenter(), stepSeconds: 0.5)
        try tracker.push(Self.audio)
        try tracker.finish()
        let centres = tracker.windows.flatMap { window in window.activeMasks.indices.map { window.centreSeconds(frame: $0) } }
        #expect(centres.count == 25)
        #expect(zip(centres, centres.dropFirst()).allSatisfy { abs($1 - $0 - 0.1) < 1e-9 })
        // Window 2 starts at 0.5 s and decides 0.75–1.25 s.
        #expect(abs(tracker.windows[1].firstCentreSeconds - 0.75) < 1e-9 && tracker.windows[1].activeMasks.count == 5)
    }

    /// Audio that ends on a window's border leaves nothing for finish; pushes after it are ignored.
    @Test func finishAfterAWholeWindowSegmentsNothingMore() throws {
        let segmenter = ScriptedSegmenter()
        let tracker = OverlapTracker(segmenter: segmenter)
        try tracker.push(Array(Self.audio.prefix(200)))
        try tracker.finish()
        try tracker.push(Array(Self.audio.prefix(200)))
        #expect(segmenter.windowsSeen.count == 2)
        #expect(tracker.windows.map(\.activeMasks.count) == [10, 10])
    }
}

struct SegmentedVoiceGroupsTests {
    /// The embedded frames under each local speaker's solo frames, per window; a window counts only when
    /// two or more local speakers have enough such frames.
    @Test func groupsAreTheFramesUnderEachLocalSpeakerAloneInWindowsWithTwo() {
        let window = OverlapTurnsTests.window([1, 1, 1, 1, 1, 3, 2, 2, 2, 2, 2])
        let frames = (0 ..< 11).map { (startSeconds: Double($0) * 0.1, endSeconds: Double($0 + 1) * 0.1) }
        #expect(StreamingDiarizer.soloGroups([window], frames: frames, minimumFrames: 4) == [[0, 1, 2, 3, 4], [6, 7, 8, 9, 10]])
        #expect(StreamingDiarizer.soloGroups([window], frames: frames, minimumFrames: 6).isEmpty)
        // A second window with one voice adds nothing; frames outside every window are never grouped.
        let alone = OverlapTurnsTests.window([1, 1, 1, 1, 1], start: 1.1)
        let more = frames + (11 ..< 20).map { (startSeconds: Double($0) * 0.1, endSeconds: Double($0 + 1) * 0.1) }
        #expect(StreamingDiarizer.soloGroups([window, alone], frames: more, minimumFrames: 4) == [[0, 1, 2, 3, 4], [6, 7, 8, 9, 10]])
    }
}
