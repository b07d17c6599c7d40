import Foundation
import Logging
import SpeakerManager
import Testing
@testable import StreamingDiarization

/// Speech wherever the signal is loud, closed after 0.2 s of quiet; analysed as soon as received.
final class LoudnessDetector: SpeechDetector {
    private var received = 0
    private var speechStart: Int?
    private var quietRun = 0
    private var closed: [SpeechSpan] = []
    let rate = 16_000.0

    func accept(samples: [Float]) {
        for sample in samples {
            if abs(sample) > 0.05 {
                if speechStart == nil { speechStart = received }
                quietRun = 0
            } else if let start = speechStart {
                quietRun += 1
                if quietRun >= 3200 {
                    closed.append(SpeechSpan(startSeconds: Double(start) / rate, endSeconds: Double(received - quietRun + 1) / rate))
                    speechStart = nil
                    quietRun = 0
                }
            }
            received += 1
        }
    }

    func popSegments() -> [SpeechSpan] { defer { closed = [] }; return closed }
    var ongoingSpeechStartSeconds: Double? { speechStart.map { Double($0) / rate } }
    var analyzedSeconds: Double { Double(received) / rate }
    func flush() {
        if let start = speechStart {
            closed.append(SpeechSpan(startSeconds: Double(start) / rate, endSeconds: Double(received - quietRun) / rate))
            speechStart = nil
        }
    }
}

/// A real (if simple) embedding of audio: energies at the test voices' pitches, from the window's own
/// samples, so speaker identity is recovered from the signal, not handed over.
struct ToneEmbedder: SpeakerEmbedder {
    static let frequencies: [Double] = [180, 260, 370]
    var dimension: Int { 256 }

    func embed(_ windows: [[Float]]) throws -> [[Float]] {
        windows.map { window in
            var vector = [Float](repeating: 0.01, count: 256)
            for (index, frequency) in Self.frequencies.enumerated() {
                var re = 0.0, im = 0.0
                for (n, sample) in window.enumerated() {
                    let phase = 2 * Double.pi * frequency * Double(n) / 16_000
                    re += Double(sample) * cos(phase)
                    im += Double(sample) * sin(phase)
                }
                vector[index] = Float((re * re + im * im).squareRoot() / Double(max(1, window.count)))
            }
            return vector
        }
    }
}

func tone(_ voice: Int, seconds: Double) -> [Float] {
    let frequency = ToneEmbedder.frequencies[voice]
    return (0 ..< Int(seconds * 16_000)).map { Float(0.4 * sin(2 * Double.pi * frequency * Double($0) / 16_000)) }
}

func silence(_ seconds: Double) -> [Float] { [Float](repeating: 0, count: Int(seconds * 16_000)) }

@Suite struct StreamingDiarizerTests {
    static let logger = Logger(label: "diarizer-test")

    func makeDiarizer(hint: SpeakerCountHint = .none, config: DiarizerConfig = .default) throws -> StreamingDiarizer {
        var managerConfig = SpeakerManagerConfig.default
        managerConfig.speakerThreshold = 0.3
        managerConfig.minEmbeddingUpdateDurationSeconds = 1
        let manager = try SpeakerManager(config: managerConfig, logger: Self.logger)
        return StreamingDiarizer(config: config, hint: hint, detector: LoudnessDetector(), embedder: ToneEmbedder(), speakers: manager, logger: Self.logger)
    }

    /// Applies published turns (upserts and removals by id) the way the host does.
    func apply(_ turns: [DiarizerTurn], to state: inout [UInt64: DiarizerTurn]) {
        for turn in turns { if turn.isRemoved { state[turn.id] = nil } else { state[turn.id] = turn } }
    }

    func speaker(at seconds: Double, _ state: [UInt64: DiarizerTurn]) -> Int32? {
        state.values.first { $0.startSeconds <= seconds && seconds < $0.endSeconds }?.speaker
    }

    /// A (0.5–3.5 s), B straight after with no pause (3.5–6.5 s), silence, A again (7.5–9.5 s).
    let meeting = silence(0.5) + tone(0, seconds: 3) + tone(1, seconds: 3) + silence(1) + tone(0, seconds: 2) + silence(1)

    @Test func findsAChangeInsideSpeechAndKeepsTheSamePersonsLabel() throws {
        let diarizer = try makeDiarizer()
        var state: [UInt64: DiarizerTurn] = [:]
        for chunk in stride(from: 0, to: meeting.count, by: 1600) {
            try diarizer.push(Array(meeting[chunk ..< min(meeting.count, chunk + 1600)]))
            apply(diarizer.pullTurns(), to: &state)
        }
        try diarizer.finalize()
        apply(diarizer.pullTurns(), to: &state)
        let a = try #require(speaker(at: 1.0, state))
        let b = try #require(speaker(at: 5.0, state))
        #expect(a != b)
        #expect(speaker(at: 8.5, state) == a)
        #expect(speaker(at: 7.0, state) == nil)   // the pause is no one's
        // The A→B change without a pause is placed within a frame and a half (0.75 s) of the truth:
        // frames whose window straddles the change are ambiguous.
        let boundary = state.values.filter { $0.speaker == b }.map(\.startSeconds).min()!
        #expect(abs(boundary - 3.5) <= 0.75)
        #expect(diarizer.speakers.speakerCount == 2)
    }

    /// The overlap pass's new speaker takes an id nobody in the session has had, enrolled people included.
    @Test func anUnusedSpeakerIDIsAboveEveryKnownOne() throws {
        var managerConfig = SpeakerManagerConfig.default
        managerConfig.speakerThreshold = 0.3
        let manager = try SpeakerManager(config: managerConfig, logger: Self.logger)
        let profile = try ToneEmbedder().embed([tone(2, seconds: 1.5)])[0]
        try manager.initializeKnownSpeakers([Speaker(id: "40", name: "Ada", currentEmbedding: profile, durationSeconds: 5, createdAt: Date(), isPermanent: true)],
                                            mode: .overwrite, preserveIfPermanent: false)
        let diarizer = StreamingDiarizer(detector: LoudnessDetector(), embedder: ToneEmbedder(), speakers: manager, logger: Self.logger)
        for chunk in stride(from: 0, to: meeting.count, by: 1600) { try diarizer.push(Array(meeting[chunk ..< min(meeting.count, chunk + 1600)])) }
        try diarizer.finalize()
        let used = diarizer.speakersWithTurns + [40]
        #expect(diarizer.unusedSpeakerID == used.max()! + 1)
        #expect(!used.contains(diarizer.unusedSpeakerID))
    }

    /// A pause the VAD bridges (0.15 s here; the test detector closes speech after 0.2 s) between two
    /// people is taken out of both turns, live and after finalize; with the pause search off, the
    /// turns meet on the frame grid instead.
    @Test func aPauseAtAChangeOfSpeakerIsNobodysSpeech() throws {
        let audio = silence(0.5) + tone(0, seconds: 3) + silence(0.15) + tone(1, seconds: 3) + silence(1)
        var config = DiarizerConfig.default
        config.speakerChangePauseSeconds = 0.1
        for searchesPauses in [true, false] {
            if !searchesPauses { config.speakerChangePauseDecibels = 0 }
            let diarizer = try makeDiarizer(config: config)
            var state: [UInt64: DiarizerTurn] = [:]
            var liveBoundaries: [(Double, Double)] = []
            for chunk in stride(from: 0, to: audio.count, by: 1600) {
                try diarizer.push(Array(audio[chunk ..< min(audio.count, chunk + 1600)]))
                apply(diarizer.pullTurns(), to: &state)
                let sorted = state.values.sorted { $0.startSeconds < $1.startSeconds }
                if sorted.count == 2 { liveBoundaries.append((sorted[0].endSeconds, sorted[1].startSeconds)) }
            }
            try diarizer.finalize()
            apply(diarizer.pullTurns(), to: &state)
            let turns = state.values.sorted { $0.startSeconds < $1.startSeconds }
            try #require(turns.count == 2)
            #expect(turns[0].speaker != turns[1].speaker)
            if searchesPauses {
                #expect(abs(turns[0].endSeconds - 3.5) <= 0.02)
                #expect(abs(turns[1].startSeconds - 3.65) <= 0.02)
                #expect(!liveBoundaries.isEmpty && liveBoundaries.allSatisfy { abs($0.0 - 3.5) <= 0.02 && abs($0.1 - 3.65) <= 0.02 })
            } else {
                #expect(turns[0].endSeconds == turns[1].startSeconds)
            }
        }
    }

    /// Boundary moves never turn a turn inside out. A one-frame turn whose start the pause before it
    /// has already moved late, followed by a short edge frame and a pause beyond it, used to end up
    /// with its neighbour starting after that neighbour's own end (the host drops such a turn, and the
    /// stale version it revises stays). Such a boundary now stays on the grid; a move that leaves both
    /// turns at least 0.1 s long still happens.
    @Test func movingBoundariesIntoPausesKeepsEveryTurnInOrder() {
        func turn(_ id: UInt64, _ speaker: Int32, _ start: Double, _ end: Double) -> DiarizerTurn {
            DiarizerTurn(id: id, speaker: speaker, startSeconds: start, endSeconds: end, confidence: 1)
        }
        let grid = [turn(1, 1, 0.0, 1.0), turn(2, 2, 1.0, 1.5), turn(3, 1, 1.5, 1.7)]
        let pauses: [Double: (startSeconds: Double, endSeconds: Double)] = [1.0: (1.3, 1.4), 1.5: (1.9, 2.0)]
        let moved = StreamingDiarizer.movedIntoPauses(grid, frameSeconds: 0.5) { pauses[$0] }
        #expect(moved.map(\.startSeconds) == [0.0, 1.4, 1.5])
        #expect(moved.map(\.endSeconds) == [1.3, 1.5, 1.7])
        for (earlier, later) in zip(moved, moved.dropFirst()) { #expect(earlier.endSeconds <= later.startSeconds) }
        #expect(moved.allSatisfy { $0.endSeconds - $0.startSeconds >= 0.1 - 1e-9 })

        // Random grids and pauses: every turn keeps its order and a positive length.
        var seed: UInt64 = 0x7A3E
        func unit() -> Double {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Double(seed >> 11) / Double(1 << 53)
        }
        for _ in 0 ..< 500 {
            var turns: [DiarizerTurn] = []
            var time = 0.0
            for index in 0 ..< 6 {
                let length = unit() < 0.3 ? 0.1 + 0.4 * unit() : 0.5 * Double(1 + Int(unit() * 4))
                turns.append(turn(UInt64(index), Int32(index % 2), time, time + length))
                time += length
            }
            let result = StreamingDiarizer.movedIntoPauses(turns, frameSeconds: 0.5) { seconds in
                guard unit() < 0.7 else { return nil }
                let start = seconds + (unit() - 0.5) * 1.5
                return (start, start + 0.1 + 0.4 * unit())
            }
            for (earlier, later) in zip(result, result.dropFirst()) { #expect(earlier.endSeconds <= later.startSeconds + 1e-9) }
            #expect(result.allSatisfy { $0.endSeconds > $0.startSeconds })
        }
    }

    /// With or without analysis blocks: a block delays only the VAD's news, never a batch that is due.
    @Test(arguments: [0, DiarizerConfig.default.analysisBlockSeconds, 1.0])
    func turnsFollowTheAudioWithinAboutASecond(blockSeconds: Double) throws {
        var blocked = DiarizerConfig.default
        blocked.analysisBlockSeconds = blockSeconds
        let diarizer = try makeDiarizer(config: blocked)
        let config = diarizer.config
        let bound = config.frameSeconds * Double(config.minimumBatch) + (config.windowSeconds - config.frameSeconds) / 2
        #expect(bound <= 1.5)
        var state: [UInt64: DiarizerTurn] = [:]
        var latest = 0.0
        for chunk in stride(from: 0, to: meeting.count, by: 1600) {
            try diarizer.push(Array(meeting[chunk ..< min(meeting.count, chunk + 1600)]))
            apply(diarizer.pullTurns(), to: &state)
            let pushedSeconds = Double(min(meeting.count, chunk + 1600)) / 16_000
            let labelledUpTo = state.values.map(\.endSeconds).max() ?? 0
            // From the moment speech that began at 0.5 s could first be labelled, until it ends at 6.5 s.
            if pushedSeconds > 0.5 + bound, pushedSeconds < 6.5 { latest = max(latest, pushedSeconds - labelledUpTo) }
        }
        // While someone talks, the labelled region trails the audio by at most a batch of frames plus the look-ahead.
        #expect(latest <= bound + 1e-9, "turns trail the audio by \(latest) s")
    }

    /// Where speech ends is the VAD's news, which a block may hold back by at most the block.
    @Test func aBlockDelaysTheEndOfSpeechByAtMostItsLength() throws {
        func secondsUntilTheFirstStretchEnds(blockSeconds: Double) throws -> Double {
            var blocked = DiarizerConfig.default
            blocked.analysisBlockSeconds = blockSeconds
            let diarizer = try makeDiarizer(config: blocked)
            var state: [UInt64: DiarizerTurn] = [:]
            for chunk in stride(from: 0, to: meeting.count, by: 1600) {
                try diarizer.push(Array(meeting[chunk ..< min(meeting.count, chunk + 1600)]))
                apply(diarizer.pullTurns(), to: &state)
                // The first stretch of speech ends at 6.5 s: done once a turn ends there and none is open past it.
                if state.values.contains(where: { abs($0.endSeconds - 6.5) < 0.05 }) { return Double(chunk + 1600) / 16_000 }
            }
            return .infinity
        }
        let unblocked = try secondsUntilTheFirstStretchEnds(blockSeconds: 0)
        let block = DiarizerConfig.default.analysisBlockSeconds
        let blocked = try secondsUntilTheFirstStretchEnds(blockSeconds: block)
        #expect(unblocked < 8)
        #expect(blocked >= unblocked && blocked <= unblocked + block + 1e-9, "end reported at \(blocked) s with blocks, \(unblocked) s without")
    }

    @Test func chunkSizeDoesNotChangeTheResult() throws {
        var results: [[DiarizerTurn]] = []
        for size in [160, 1600, 7777] {
            let diarizer = try makeDiarizer()
            var state: [UInt64: DiarizerTurn] = [:]
            for chunk in stride(from: 0, to: meeting.count, by: size) {
                try diarizer.push(Array(meeting[chunk ..< min(meeting.count, chunk + size)]))
                apply(diarizer.pullTurns(), to: &state)
            }
            try diarizer.finalize()
            apply(diarizer.pullTurns(), to: &state)
            results.append(state.values.sorted { $0.startSeconds < $1.startSeconds })
        }
        #expect(results[0].map(\.speaker) == results[1].map(\.speaker) && results[1].map(\.speaker) == results[2].map(\.speaker))
        for (x, y) in zip(results[0], results[2]) { #expect(abs(x.startSeconds - y.startSeconds) < 0.01 && abs(x.endSeconds - y.endSeconds) < 0.01) }
    }

    @Test func maximumHintCapsTheSpeakersAndFinalizeHonoursIt() throws {
        let three = silence(0.3) + tone(0, seconds: 2) + silence(0.5) + tone(1, seconds: 2) + silence(0.5) + tone(2, seconds: 2) + silence(0.5)
        let diarizer = try makeDiarizer(hint: SpeakerCountHint(maximum: 2))
        var state: [UInt64: DiarizerTurn] = [:]
        for chunk in stride(from: 0, to: three.count, by: 1600) {
            try diarizer.push(Array(three[chunk ..< min(three.count, chunk + 1600)]))
        }
        try diarizer.finalize()
        apply(diarizer.pullTurns(), to: &state)
        #expect(diarizer.speakers.speakerCount == 2)
        #expect(Set(state.values.map(\.speaker)).count == 2)
        let unbounded = try makeDiarizer()
        var all: [UInt64: DiarizerTurn] = [:]
        try unbounded.push(three)
        try unbounded.finalize()
        apply(unbounded.pullTurns(), to: &all)
        #expect(Set(all.values.map(\.speaker)).count == 3)
    }

    /// An enrolled person (permanent known speaker 100) and a diarizer whose online threshold accepts
    /// any voice as them, as a loose threshold does with similar real voices.
    func sessionWithEnrolledVoice(_ voice: Int, hearing audio: [Float], enrolledThreshold: Float? = nil) throws -> [UInt64: DiarizerTurn] {
        var managerConfig = SpeakerManagerConfig.default
        managerConfig.speakerThreshold = 1.9
        let manager = try SpeakerManager(config: managerConfig, logger: Self.logger)
        let profile = try ToneEmbedder().embed([tone(voice, seconds: 1.5)])[0]
        try manager.initializeKnownSpeakers(
            [Speaker(id: "100", name: "Ada", currentEmbedding: profile, durationSeconds: 5, createdAt: Date(), isPermanent: true)],
            mode: .overwrite, preserveIfPermanent: false)
        var config = DiarizerConfig.default
        config.speakerThreshold = 1.9
        if let enrolledThreshold { config.enrolledSpeakerThreshold = enrolledThreshold }
        let diarizer = StreamingDiarizer(config: config, detector: LoudnessDetector(), embedder: ToneEmbedder(), speakers: manager, logger: Self.logger)
        var state: [UInt64: DiarizerTurn] = [:]
        try diarizer.push(audio)
        apply(diarizer.pullTurns(), to: &state)
        #expect(Set(state.values.map(\.speaker)) == [100], "online, the loose threshold gives every voice the enrolled name")
        try diarizer.finalize()
        apply(diarizer.pullTurns(), to: &state)
        return state
    }

    @Test func finalizeTakesAnEnrolledNameFromAVoiceThatIsNotTheirs() throws {
        let state = try sessionWithEnrolledVoice(0, hearing: silence(0.5) + tone(1, seconds: 4) + silence(1))
        #expect(!state.isEmpty)
        #expect(!state.values.contains { $0.speaker == 100 })
    }

    @Test func finalizeKeepsTheEnrolledNameOnTheirOwnVoice() throws {
        let state = try sessionWithEnrolledVoice(0, hearing: silence(0.5) + tone(0, seconds: 3) + silence(1) + tone(1, seconds: 3) + silence(1))
        #expect(speaker(at: 2.0, state) == 100)
        let other = try #require(speaker(at: 6.0, state))
        #expect(other != 100)
    }

    /// Two voices both within the enrolled threshold (as sample.wav's two people are at 0.10): the name goes
    /// to the nearer voice, the enrolled person's own, though the other talked longer under that name online.
    @Test func finalizeGivesAnEnrolledNameToTheNearestVoiceNotTheOneThatHeldItLongest() throws {
        let state = try sessionWithEnrolledVoice(
            0, hearing: silence(0.5) + tone(1, seconds: 5) + silence(1) + tone(0, seconds: 2.5) + silence(1), enrolledThreshold: 1.5)
        #expect(speaker(at: 7.5, state) == 100)
        let other = try #require(speaker(at: 3.0, state))
        #expect(other != 100)
    }

    /// An enrolled voice whose first frames miss their profile online (the profile was recorded a
    /// little differently: here it carries some of another pitch, distance ~0.07, outside the online
    /// threshold of 0.05 but inside the enrolled one of 0.1) founds a session number; at finalize the
    /// cluster still matches the profile and the number gives way to the person's name.
    @Test func finalizeNamesAnEnrolledVoiceThatFoundedASessionNumberOnline() throws {
        var managerConfig = SpeakerManagerConfig.default
        managerConfig.speakerThreshold = 0.05
        let manager = try SpeakerManager(config: managerConfig, logger: Self.logger)
        let recorded = zip(tone(0, seconds: 1.5), tone(1, seconds: 1.5)).map { $0 + 0.5 * $1 }
        let profile = try ToneEmbedder().embed([recorded])[0]
        try manager.initializeKnownSpeakers(
            [Speaker(id: "100", name: "Ada", currentEmbedding: profile, durationSeconds: 5, createdAt: Date(), isPermanent: true)],
            mode: .overwrite, preserveIfPermanent: false)
        var config = DiarizerConfig.default
        config.speakerThreshold = 0.05
        config.enrolledSpeakerThreshold = 0.1
        let diarizer = StreamingDiarizer(config: config, detector: LoudnessDetector(), embedder: ToneEmbedder(), speakers: manager, logger: Self.logger)
        var state: [UInt64: DiarizerTurn] = [:]
        try diarizer.push(silence(0.5) + tone(0, seconds: 4) + silence(1) + tone(1, seconds: 4) + silence(1))
        apply(diarizer.pullTurns(), to: &state)
        let online = try #require(speaker(at: 2.5, state))
        #expect(online != 100, "online the voice is outside its profile's threshold and founds a number")
        try diarizer.finalize()
        apply(diarizer.pullTurns(), to: &state)
        #expect(speaker(at: 2.5, state) == 100)
        let other = try #require(speaker(at: 7.5, state))
        #expect(other != 100)
    }

    /// A session whose count admits no second speaker (the gain and turn-taking ways both shut, as a
    /// voice too brief or too close to pay for itself is), with `enrolled` voices as permanent known
    /// speakers 100, 101, ...
    func sessionWhereTheCountSeesOneVoice(_ audio: [Float], enrolled voices: [Int], uncountedVoiceMargin: Float = DiarizerConfig.default.uncountedVoiceMargin) throws -> [UInt64: DiarizerTurn] {
        var managerConfig = SpeakerManagerConfig.default
        managerConfig.speakerThreshold = 0.3
        let manager = try SpeakerManager(config: managerConfig, logger: Self.logger)
        let profiles = try ToneEmbedder().embed(voices.map { tone($0, seconds: 1.5) })
        try manager.initializeKnownSpeakers(
            zip(voices.indices, profiles).map { index, profile in
                Speaker(id: String(100 + index), name: "person \(index)", currentEmbedding: profile, durationSeconds: 5, createdAt: Date(), isPermanent: true)
            },
            mode: .overwrite, preserveIfPermanent: false)
        var config = DiarizerConfig.default
        config.minimumCountGain = 1
        config.minimumCountCoherence = 0
        config.uncountedVoiceMargin = uncountedVoiceMargin
        let diarizer = StreamingDiarizer(config: config, detector: LoudnessDetector(), embedder: ToneEmbedder(), speakers: manager, logger: Self.logger)
        var state: [UInt64: DiarizerTurn] = [:]
        // 100 ms chunks, as a device sends them: the diarizer keeps only `audioHistorySeconds` of audio.
        for start in stride(from: 0, to: audio.count, by: 1600) { try diarizer.push(Array(audio[start ..< min(audio.count, start + 1600)])) }
        try diarizer.finalize()
        apply(diarizer.pullTurns(), to: &state)
        return state
    }

    /// A (0.5–6.5 s), B briefly (6.5–9.5 s), A again (9.5–15.5 s), without a pause.
    let briefSecondVoice = silence(0.5) + tone(0, seconds: 6) + tone(1, seconds: 3) + tone(0, seconds: 6) + silence(1)

    @Test func anEnrolledVoiceTheCountMissedIsSplitOffAndNamed() throws {
        let unknown = try sessionWhereTheCountSeesOneVoice(briefSecondVoice, enrolled: [])
        #expect(Set(unknown.values.map(\.speaker)).count == 1, "without a profile the count sees one voice")
        let known = try sessionWhereTheCountSeesOneVoice(briefSecondVoice, enrolled: [1])
        // B's first second goes to A, as it does when the count finds B itself: the windows there still hold A.
        #expect(speaker(at: 9.0, known) == 100)
        let other = try #require(speaker(at: 3.0, known))
        #expect(other != 100)
        #expect(speaker(at: 13.0, known) == other)
        #expect(Set(known.values.map(\.speaker)).count == 2)
    }

    @Test func anEnrolledPersonWhoIsNotThereSplitsNothing() throws {
        let state = try sessionWhereTheCountSeesOneVoice(briefSecondVoice, enrolled: [2])
        #expect(!state.isEmpty)
        #expect(Set(state.values.map(\.speaker)).count == 1)
        #expect(!state.values.contains { $0.speaker == 100 })
    }

    /// A, B for 3 s, A, B for 3 s again, A, without a pause: B returns, so B is a voice of its own.
    let secondVoiceInTwoBriefTurns = silence(0.5) + tone(0, seconds: 6) + tone(1, seconds: 3) + tone(0, seconds: 6)
        + tone(1, seconds: 3) + tone(0, seconds: 6) + silence(1)

    @Test func aVoiceTheCountMissedIsSplitOffWhenItReturns() throws {
        let shut = try sessionWhereTheCountSeesOneVoice(secondVoiceInTwoBriefTurns, enrolled: [], uncountedVoiceMargin: 0)
        #expect(Set(shut.values.map(\.speaker)).count == 1, "with the search off the count sees one voice")
        let state = try sessionWhereTheCountSeesOneVoice(secondVoiceInTwoBriefTurns, enrolled: [])
        #expect(Set(state.values.map(\.speaker)).count == 2)
        let a = try #require(speaker(at: 3.0, state))
        let b = try #require(speaker(at: 9.0, state))
        #expect(b != a)
        #expect(speaker(at: 18.0, state) == b)
        #expect(speaker(at: 13.0, state) == a && speaker(at: 24.0, state) == a)
    }

    @Test func aBriefVoiceInOneTurnIsNotCountedByItself() throws {
        // briefSecondVoice: B's 3 s in one turn could be A's drift; only an enrolled profile splits it.
        let state = try sessionWhereTheCountSeesOneVoice(briefSecondVoice, enrolled: [])
        #expect(Set(state.values.map(\.speaker)).count == 1)
    }

    @Test func audioAfterFinalizeIsRefused() throws {
        let diarizer = try makeDiarizer()
        try diarizer.push(silence(0.1))
        try diarizer.finalize()
        #expect { try diarizer.push(silence(0.1)) } throws: { ($0 as? DiarizerError)?.code == .finalized }
    }
}

@Suite struct AgglomerativeClusteringTests {
    @Test func averageLinkageStopsAtTheThresholdAndHonoursBounds() {
        let a: [Float] = [1, 0, 0], a2: [Float] = [0.95, 0.05, 0], b: [Float] = [0, 1, 0], c: [Float] = [0, 0, 1]
        let labels = AgglomerativeClustering.cluster([a, a2, b, c], weights: [1, 1, 1, 1], threshold: 0.2)
        #expect(labels[0] == labels[1] && Set(labels).count == 3)
        let two = AgglomerativeClustering.cluster([a, a2, b, c], weights: [1, 1, 1, 1], threshold: 0.2, maxClusters: 2)
        #expect(Set(two).count == 2 && two[0] == two[1])
        let four = AgglomerativeClustering.cluster([a, a2, b, c], weights: [1, 1, 1, 1], threshold: 0.2, minClusters: 4)
        #expect(Set(four).count == 4)
    }
}
