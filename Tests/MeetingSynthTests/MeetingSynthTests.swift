import Foundation
import SpeakerSyncAudio
import Testing
@testable import MeetingSynth

/// One 2-speaker, 6-turn meeting shared by the read-only checks (synthesis runs real espeak-ng).
enum Fixture {
    static let script: MeetingScript = try! MeetingScript.generate(seed: 7, speakerCount: 2, turnCount: 6)
    static let meeting: SynthesizedMeeting = try! MeetingSynthesizer().synthesize(script, seed: 7)

    static func rms(_ audio: [Float], _ start: Double, _ end: Double) -> Double {
        let a = max(0, Int((start * 16_000).rounded())), b = min(audio.count, Int((end * 16_000).rounded()))
        guard b > a else { return 0 }
        var sum = 0.0
        for i in a ..< b { sum += Double(audio[i]) * Double(audio[i]) }
        return (sum / Double(b - a)).squareRoot()
    }

    static func temporaryDirectory(_ name: String) -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("meetingsynth-\(ProcessInfo.processInfo.processIdentifier)-\(name)")
    }
}

@Suite struct MeetingSynthTests {
    @Test func wordsLieInsideTheirTurnsInOrderWithoutOverlap() {
        let meeting = Fixture.meeting
        #expect(meeting.sampleRate == 16_000)
        #expect(meeting.turns.count == 6)
        #expect(meeting.words.count == Fixture.script.turns.reduce(0) { $0 + $1.words.count })
        var wordIndex = 0
        for (turn, scripted) in zip(meeting.turns, Fixture.script.turns) {
            #expect(turn.speaker == scripted.speaker)
            let words = meeting.words[wordIndex ..< wordIndex + scripted.words.count]
            wordIndex += scripted.words.count
            #expect(words.map(\.text) == scripted.words)
            #expect(words.first!.startSeconds == turn.startSeconds)
            #expect(words.last!.endSeconds == turn.endSeconds)
            for word in words {
                #expect(word.speaker == turn.speaker)
                #expect(word.startSeconds < word.endSeconds)
                #expect(word.startSeconds >= turn.startSeconds && word.endSeconds <= turn.endSeconds)
            }
            for (a, b) in zip(words, words.dropFirst()) {
                let gap = b.startSeconds - a.endSeconds
                #expect(gap >= 0.06 - 1e-9 && gap <= 0.12 + 1e-9, "intra-turn gap \(gap)")
            }
        }
        // Default config has no overlaps: turns follow each other with a 0.3–0.9 s pause.
        for (a, b) in zip(meeting.turns, meeting.turns.dropFirst()) {
            let pause = b.startSeconds - a.endSeconds
            #expect(pause >= 0.3 - 1e-9 && pause <= 0.9 + 1e-9, "pause \(pause)")
        }
        #expect(meeting.durationSeconds > meeting.turns.last!.endSeconds)
    }

    @Test func audioIsLoudInsideWordsAndSilentInGaps() {
        let meeting = Fixture.meeting
        for word in meeting.words {
            let rms = Fixture.rms(meeting.audio, word.startSeconds, word.endSeconds)
            #expect(rms > 0.01, "word '\(word.text)' RMS \(rms)")
        }
        var gaps: [(Double, Double)] = [(0, meeting.words.first!.startSeconds)]
        let ordered = meeting.wordsByStart
        for (a, b) in zip(ordered, ordered.dropFirst()) { gaps.append((a.endSeconds, b.startSeconds)) }
        gaps.append((ordered.last!.endSeconds, meeting.durationSeconds))
        for (start, end) in gaps {
            #expect(Fixture.rms(meeting.audio, start, end) < 1e-4)
        }
    }

    @Test func truthFilesRoundTrip() throws {
        let meeting = Fixture.meeting
        let dir = Fixture.temporaryDirectory("files")
        defer { try? FileManager.default.removeItem(at: dir) }
        let urls = try meeting.write(to: dir, baseName: "meet")

        let wav = try WAVFile.read(contentsOf: urls[0])
        #expect(wav.sampleRate == 16_000 && wav.samples.count == meeting.audio.count)
        let maxError = zip(wav.samples, meeting.audio).map { abs($0 - $1) }.max() ?? 1
        #expect(maxError <= 1.0 / 65_536 + 1e-7)

        let rttmText = try String(contentsOf: urls[1], encoding: .utf8)
        #expect(rttmText.split(separator: "\n").allSatisfy {
            $0.hasPrefix("SPEAKER meet 1 ") && $0.hasSuffix(" <NA> <NA>") && $0.split(separator: " ").count == 10
        })
        let turns = try RTTMFile.decode(rttmText)
        #expect(turns.count == meeting.turns.count)
        for (parsed, truth) in zip(turns, meeting.turns) {
            #expect(parsed.speaker == truth.speaker)
            #expect(abs(parsed.startSeconds - truth.startSeconds) <= 0.0005 + 1e-9)
            #expect(abs(parsed.endSeconds - truth.endSeconds) <= 0.001 + 1e-9)
        }

        let words = try WordsFile.decode(Data(contentsOf: urls[2])).words
        #expect(words.count == meeting.words.count)
        for (parsed, truth) in zip(words, meeting.wordsByStart) {
            #expect(parsed.text == truth.text && parsed.speaker == truth.speaker)
            #expect(parsed.start == truth.startSeconds && parsed.end == truth.endSeconds)
        }
        let deviceWords = try JSONSerialization.jsonObject(with: meeting.wordsJSON(includeSpeaker: false))
        let entries = (deviceWords as? [String: Any])?["words"] as? [[String: Any]] ?? []
        #expect(entries.count == meeting.words.count)
        #expect(entries.allSatisfy { $0["speaker"] == nil && $0["text"] is String && $0["start"] is Double })

        let replay = try DeviceASRResult.decodeReplay(Data(contentsOf: urls[3]))
        #expect(replay == meeting.deviceResults())
    }

    @Test func deviceViewRevisesVolatileResultsIntoTheTrueWords() throws {
        let meeting = Fixture.meeting
        let results = meeting.deviceResults(config: DeviceASRConfig(volatileProbability: 0.7))
        let finals = results.filter(\.message.isFinal)
        // Every result id is finalised once; final words in sending order are exactly the true words.
        #expect(Set(finals.map(\.message.resultID)).count == finals.count)
        let finalWords = finals.flatMap(\.message.words)
        #expect(finalWords.map(\.text) == meeting.wordsByStart.map(\.text))
        #expect(finalWords.map(\.start) == meeting.wordsByStart.map(\.startSeconds))
        let volatile = results.filter { !$0.message.isFinal }
        #expect(!volatile.isEmpty)
        for partial in volatile {
            let finalIndex = results.firstIndex { $0.message.isFinal && $0.message.resultID == partial.message.resultID }!
            let partialIndex = results.firstIndex(of: partial)!
            #expect(partialIndex < finalIndex)
            let full = results[finalIndex].message.words
            #expect(partial.message.words.count == full.count - 1)
            #expect(partial.message.words.map(\.text) == full.dropLast().map(\.text))
        }
        #expect(zip(results, results.dropFirst()).allSatisfy { $0.availableAtSeconds <= $1.availableAtSeconds })
        #expect(results.allSatisfy { r in r.message.words.allSatisfy { r.availableAtSeconds >= $0.end } })
        // The wire shape of a message.
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(results[0].message)) as? [String: Any]
        #expect(json?["type"] as? String == "words" && json?["result_id"] is String && json?["final"] is Bool)
    }

    @Test func sameSeedIsByteIdenticalDifferentSeedsDiffer() throws {
        let again = try MeetingSynthesizer().synthesize(Fixture.script, seed: 7)
        #expect(again.wavData() == Fixture.meeting.wavData())
        #expect(again.audio == Fixture.meeting.audio)
        #expect(again.words == Fixture.meeting.words)

        let otherTiming = try MeetingSynthesizer().synthesize(Fixture.script, seed: 8)
        #expect(otherTiming.audio != Fixture.meeting.audio)
        #expect(otherTiming.words.map(\.startSeconds) != Fixture.meeting.words.map(\.startSeconds))
        #expect(otherTiming.words.map(\.text) == Fixture.meeting.words.map(\.text))

        let otherScript = try MeetingScript.generate(seed: 8, speakerCount: 2, turnCount: 6)
        #expect(otherScript != Fixture.script)
    }

    @Test func overlapConfigYieldsOverlappingTurnsMixedByAddition() throws {
        let config = SynthConfig(overlapProbability: 1, overlapSeconds: 0.4 ... 0.6)
        let script = try MeetingScript.generate(seed: 3, speakerCount: 3, turnCount: 5, wordsPerTurn: 6 ... 8)
        let meeting = try MeetingSynthesizer(config: config).synthesize(script, seed: 3)
        for (a, b) in zip(meeting.turns, meeting.turns.dropFirst()) {
            #expect(b.startSeconds < a.endSeconds, "turns \(a) and \(b) do not overlap")
            #expect(b.startSeconds > a.startSeconds)
            #expect(a.speaker != b.speaker)
        }
        // An explicit negative pause is honoured exactly.
        var explicit = script
        explicit.turns[1].pauseBeforeSeconds = -0.25
        let forced = try MeetingSynthesizer().synthesize(explicit, seed: 3)
        #expect(abs((forced.turns[0].endSeconds - forced.turns[1].startSeconds) - 0.25) < 1e-9)

        // Where two speakers' words overlap, the mix is their sum: solo renderings add up to it.
        let solo = try MeetingSynthesizer(config: config).synthesize(
            MeetingScript(speakers: script.speakers, turns: [script.turns[0]]), seed: 3)
        let soloSpan = Int((solo.turns[0].endSeconds * 16_000).rounded())
        let overlapStart = Int((meeting.turns[1].startSeconds * 16_000).rounded())
        #expect(overlapStart < soloSpan)
        #expect(Array(meeting.audio[..<overlapStart]) == Array(solo.audio[..<overlapStart]))
        #expect(Array(meeting.audio[overlapStart ..< soloSpan]) != Array(solo.audio[overlapStart ..< soloSpan]))
    }

    @Test func backgroundNoiseMeetsItsSNR() throws {
        let config = SynthConfig(noise: NoiseConfig(kind: .pink, snrDB: 15))
        let noisy = try MeetingSynthesizer(config: config).synthesize(Fixture.script, seed: 7)
        let clean = Fixture.meeting
        #expect(noisy.words == clean.words)
        // noise = noisy − clean (no peak limiting happens at this level); SNR over the speech samples.
        var speech = 0.0, noise = 0.0, count = 0
        for word in clean.words {
            for i in Int(word.startSeconds * 16_000) ..< Int(word.endSeconds * 16_000) {
                speech += Double(clean.audio[i]) * Double(clean.audio[i])
                let n = Double(noisy.audio[i] - clean.audio[i])
                noise += n * n
                count += 1
            }
        }
        let snr = 10 * log10(speech / noise)
        #expect(abs(snr - 15) < 1.5, "measured SNR \(snr) dB")
        #expect(Fixture.rms(noisy.audio, 0, 0.4) > 1e-3)  // lead-in is no longer silent
    }
}

@Suite struct MeetingScriptTests {
    @Test func generatorMakesConversationsFromTheVocabulary() throws {
        for speakers in 2 ... 6 {
            let script = try MeetingScript.generate(seed: UInt64(speakers), speakerCount: speakers, turnCount: 20)
            #expect(script.speakers.count == speakers)
            #expect(Set(script.speakers.map(\.voice)).count == speakers)
            #expect(Set(script.turns.map(\.speaker)) == Set(script.speakers.map(\.id)))
            #expect(zip(script.turns, script.turns.dropFirst()).allSatisfy { $0.speaker != $1.speaker })
            let vocabulary = Set(MeetingVocabulary.words)
            for turn in script.turns {
                #expect((3 ... 12).contains(turn.words.count))
                #expect(turn.words.allSatisfy(vocabulary.contains))
            }
            #expect(try MeetingScript.generate(seed: UInt64(speakers), speakerCount: speakers, turnCount: 20) == script)
        }
        #expect(MeetingVocabulary.words.count >= 300)
        #expect(Set(MeetingVocabulary.words).count == MeetingVocabulary.words.count)
    }

    @Test func invalidInputsGiveCodes() throws {
        #expect { _ = try MeetingScript.generate(seed: 1, speakerCount: 7, turnCount: 3) } throws: {
            ($0 as? SynthError)?.code == .invalidScript
        }
        #expect { _ = try MeetingScript.generate(seed: 1, speakerCount: 1, turnCount: 3) } throws: {
            ($0 as? SynthError)?.code == .invalidScript
        }
        let voice = VoiceSpec.presets[0]
        let unknownSpeaker = MeetingScript(speakers: [MeetingSpeaker(id: "a", voice: voice)],
                                           turns: [MeetingTurn(speaker: "b", words: ["hello"])])
        #expect { _ = try MeetingSynthesizer().synthesize(unknownSpeaker, seed: 1) } throws: {
            ($0 as? SynthError)?.code == .invalidScript
        }
        let optionLike = MeetingScript(speakers: [MeetingSpeaker(id: "a", voice: voice)],
                                       turns: [MeetingTurn(speaker: "a", words: ["--help"])])
        #expect { _ = try MeetingSynthesizer().synthesize(optionLike, seed: 1) } throws: {
            ($0 as? SynthError)?.code == .invalidScript
        }
        let fine = MeetingScript(speakers: [MeetingSpeaker(id: "a", voice: voice)],
                                 turns: [MeetingTurn(speaker: "a", words: ["hello"])])
        let missing = MeetingSynthesizer(config: SynthConfig(espeakExecutable: "no-such-espeak-binary"))
        #expect { _ = try missing.synthesize(fine, seed: 1) } throws: {
            ($0 as? SynthError)?.code == .espeakNotFound
        }
        #expect { _ = try RTTMFile.decode("SPEAKER x 1 abc 1.0 <NA> <NA> s <NA> <NA>") } throws: {
            ($0 as? SynthError)?.code == .invalidFile
        }
    }
}
