import Foundation
import PluginHost
import Synchronization
import Testing
import TestSupport

/// The real energy plugin, loaded with dlopen, on real audio.
@Suite("energy provider through the plugin host")
struct EnergyProviderTests {
    /// Uneven chunk sizes, like network frames: the result must not depend on them.
    static let chunkSizes = [1, 37, 160, 999, 4000, 16000, 333]

    struct Run {
        /// Every turn pulled, in order (live pulls, then the ones after finalize).
        var pulled: [ProviderTurn] = []
        /// How many of `pulled` came before finalize.
        var liveCount = 0
        /// The final state: revisions applied, removed ids gone, ordered by start.
        var final: [ProviderTurn] = []
    }

    static func diarize(_ samples: [Float], chunked: Bool, options: String = "") throws -> Run {
        let dir = try TestSupport.folderWithEnergyPlugin()
        defer { try? FileManager.default.removeItem(at: dir) }
        let registry = PluginRegistry(directory: dir.path, logger: CapturedLog().logger())
        let instance = try registry.makeInstance(providerID: "energy", sessionID: "test", optionsJSON: options)
        var run = Run()
        var offset = 0
        var chunk = 0
        while offset < samples.count {
            let size = chunked ? chunkSizes[chunk % chunkSizes.count] : samples.count
            let end = min(offset + size, samples.count)
            try instance.push(samples: Array(samples[offset..<end]))
            run.pulled += try instance.pullTurns()
            offset = end
            chunk += 1
        }
        run.liveCount = run.pulled.count
        run.pulled += try instance.finalize()
        var state: [UInt64: ProviderTurn] = [:]
        for turn in run.pulled {
            if turn.isRemoved { state[turn.turnID] = nil } else { state[turn.turnID] = turn }
        }
        run.final = state.values.sorted { ($0.startSeconds, $0.turnID) < ($1.startSeconds, $1.turnID) }
        return run
    }

    static func overlap(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        max(0, min(a.1, b.1) - max(a.0, b.0))
    }

    // MARK: - sample.wav (real two-speaker recording)

    @Test func realRecordingGivesOrderedTurnsWithinTheAudioAndStableIds() throws {
        let data = try TestSupport.dataDirectory()
        let wav = try TestSupport.readPCM16WAV(data.appendingPathComponent("sample/sample.wav"))
        #expect(wav.sampleRate == 16000)
        let duration = Double(wav.samples.count) / Double(wav.sampleRate)

        let run = try Self.diarize(wav.samples, chunked: true)
        #expect(!run.final.isEmpty)
        #expect(run.liveCount > 0, "a near-realtime provider emits turns before finalize")

        for turn in run.pulled where !turn.isRemoved {
            #expect(turn.startSeconds >= 0 && turn.endSeconds <= duration + 1e-9, "\(turn)")
            #expect(turn.startSeconds < turn.endSeconds, "\(turn)")
            #expect((0...1).contains(turn.confidence))
            #expect(turn.speaker >= 0)
        }
        // Final turns are ordered and do not overlap; ids follow time order.
        for (a, b) in zip(run.final, run.final.dropFirst()) {
            #expect(a.endSeconds <= b.startSeconds + 1e-9, "\(a) overlaps \(b)")
            #expect(a.turnID < b.turnID)
        }
        // A re-emitted id is the same turn growing: same start and speaker, end never moves back.
        var firstSeen: [UInt64: ProviderTurn] = [:]
        var revisions = 0
        for turn in run.pulled.prefix(run.liveCount) {
            if let earlier = firstSeen[turn.turnID] {
                revisions += 1
                #expect(turn.startSeconds == earlier.startSeconds)
                #expect(turn.speaker == earlier.speaker)
                #expect(turn.endSeconds >= earlier.endSeconds)
            }
            firstSeen[turn.turnID] = turn
        }
        #expect(revisions > 0, "growing turns are re-sent under their id")

        // Chunking must not change anything: one big push gives the same turns.
        let whole = try Self.diarize(wav.samples, chunked: false)
        #expect(whole.final == run.final)

        // Speech detection against the reference RTTM (speaker labels are not asserted: it is a baseline).
        let reference = try String(contentsOf: data.appendingPathComponent("sample/sample.rttm"), encoding: .utf8)
            .split(separator: "\n").compactMap { line -> (Double, Double)? in
                let f = line.split(separator: " ")
                guard f.count > 4, f[0] == "SPEAKER", let s = Double(f[3]), let d = Double(f[4]) else { return nil }
                return (s, s + d)
            }
        #expect(!reference.isEmpty)
        // Score on a 10 ms grid to avoid double-counting overlapped reference speech.
        var speech = 0, detected = 0, hits = 0
        for i in 0..<Int(duration * 100) {
            let t = (Double(i) + 0.5) / 100
            let isSpeech = reference.contains { $0.0 <= t && t < $0.1 }
            let isDetected = run.final.contains { $0.startSeconds <= t && t < $0.endSeconds }
            speech += isSpeech ? 1 : 0
            detected += isDetected ? 1 : 0
            hits += isSpeech && isDetected ? 1 : 0
        }
        let recall = Double(hits) / Double(speech), precision = Double(hits) / Double(detected)
        #expect(recall > 0.75, "recall \(recall)")
        #expect(precision > 0.85, "precision \(precision)")
    }

    @Test func instancesOnDifferentThreadsDoNotInterfere() throws {
        let wav = try TestSupport.readPCM16WAV(try TestSupport.dataDirectory().appendingPathComponent("sample/sample.wav"))
        let expected = try Self.diarize(wav.samples, chunked: false).final
        let dir = try TestSupport.folderWithEnergyPlugin()
        defer { try? FileManager.default.removeItem(at: dir) }
        let registry = PluginRegistry(directory: dir.path, logger: CapturedLog().logger())
        let results = Mutex<[Int: Result<[ProviderTurn], PluginError>]>([:])
        // Two sessions at once, each on its own thread, interleaving their chunks with the other's.
        DispatchQueue.concurrentPerform(iterations: 2) { session in
            let result = Result { () throws(PluginError) -> [ProviderTurn] in
                let instance = try registry.makeInstance(providerID: "energy", sessionID: "s\(session)", optionsJSON: "")
                var state: [UInt64: ProviderTurn] = [:]
                var turns: [ProviderTurn] = []
                var offset = 0
                while offset < wav.samples.count {
                    let end = min(offset + 1600 + 17 * session, wav.samples.count)
                    try instance.push(samples: Array(wav.samples[offset..<end]))
                    turns += try instance.pullTurns()
                    offset = end
                }
                turns += try instance.finalize()
                for turn in turns { state[turn.turnID] = turn.isRemoved ? nil : turn }
                return state.values.sorted { ($0.startSeconds, $0.turnID) < ($1.startSeconds, $1.turnID) }
            }
            results.withLock { $0[session] = result }
        }
        for session in 0..<2 {
            let turns = try #require(results.withLock { $0[session] }).get()
            #expect(turns == expected, "session \(session) differs from a lone instance")
        }
    }

    // MARK: - two espeak-ng voices

    /// Alternating low (m3) and high (f3) synthetic voices separated by pauses, with exact true times.
    static func twoVoiceMeeting(in dir: URL) throws -> (samples: [Float], truth: [(voice: String, start: Double, end: Double)]) {
        let sentences = [
            "The quarterly numbers look better than we expected this time.",
            "I agree, but the marketing budget still worries me a lot.",
            "We can move some money from the travel line into marketing.",
            "That sounds reasonable if the board approves it next week.",
            "I will prepare a short proposal for them by Friday morning.",
            "Great, send it to me first and I will review it quickly.",
        ]
        let rate = 16000.0
        var seed: UInt32 = 12345
        func noise() -> Float {  // about -60 dBFS of deterministic room noise
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return (Float(seed >> 8) / Float(1 << 24) - 0.5) * 0.004
        }
        var samples: [Float] = []
        func silence(_ seconds: Double) { samples += (0..<Int(seconds * rate)).map { _ in 0 } }
        var truth: [(String, Double, Double)] = []
        silence(0.5)
        for (i, text) in sentences.enumerated() {
            let voice = i % 2 == 0 ? "en-us+m3" : "en-us+f3"
            let raw = dir.appendingPathComponent("raw\(i).wav"), clean = dir.appendingPathComponent("s\(i).wav")
            try TestSupport.run("espeak-ng", ["-v", voice, "-w", raw.path, text])
            // 16 kHz mono 16-bit, leading and trailing silence trimmed so the true times are exact.
            try TestSupport.run("sox", [raw.path, "-r", "16000", "-c", "1", "-b", "16", clean.path,
                                        "silence", "1", "0.02", "0.5%", "reverse", "silence", "1", "0.02", "0.5%", "reverse"])
            let sentence = try TestSupport.readPCM16WAV(clean)
            let start = Double(samples.count) / rate
            samples += sentence.samples
            truth.append((voice, start, Double(samples.count) / rate))
            silence(i % 2 == 0 ? 0.8 : 1.2)
        }
        return (samples.map { $0 + noise() }, truth)
    }

    @Test func twoVoicesOfDifferentPitchGetTwoSpeakersAndTrueBoundaries() throws {
        let dir = try TestSupport.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let meeting = try Self.twoVoiceMeeting(in: dir)
        let run = try Self.diarize(meeting.samples, chunked: true)

        // Every turn lies in one sentence; each sentence is covered by turns of ONE speaker.
        var speakerOfVoice: [String: Set<Int32>] = [:]
        for sentence in meeting.truth {
            let turns = run.final.filter { Self.overlap(($0.startSeconds, $0.endSeconds), (sentence.start, sentence.end)) > 0 }
            try #require(!turns.isEmpty, "no turn for the sentence at \(sentence.start)")
            #expect(Set(turns.map(\.speaker)).count == 1, "sentence at \(sentence.start): \(turns)")
            speakerOfVoice[sentence.voice, default: []].formUnion(turns.map(\.speaker))
            // Boundaries within 0.5 s of the true ones.
            #expect(abs(turns.first!.startSeconds - sentence.start) <= 0.5, "start \(turns.first!.startSeconds) vs \(sentence.start)")
            #expect(abs(turns.last!.endSeconds - sentence.end) <= 0.5, "end \(turns.last!.endSeconds) vs \(sentence.end)")
        }
        for turn in run.final {
            #expect(meeting.truth.contains { Self.overlap((turn.startSeconds, turn.endSeconds), ($0.start, $0.end)) > 0 },
                    "turn outside every sentence: \(turn)")
        }
        let low = speakerOfVoice["en-us+m3"] ?? [], high = speakerOfVoice["en-us+f3"] ?? []
        #expect(low.count == 1, "m3 sentences got speakers \(low)")
        #expect(high.count == 1, "f3 sentences got speakers \(high)")
        #expect(low.isDisjoint(with: high), "both voices got the same speaker")
        #expect(Set(run.final.map(\.speaker)).count == 2)
    }

    @Test func maxSpeakersOneMergesBothVoices() throws {
        let dir = try TestSupport.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let meeting = try Self.twoVoiceMeeting(in: dir)
        let run = try Self.diarize(meeting.samples, chunked: false, options: #"{"max_speakers": 1}"#)
        #expect(!run.final.isEmpty)
        #expect(Set(run.final.map(\.speaker)) == [0])
    }
}
