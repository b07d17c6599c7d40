import Foundation
import Testing
@testable import MeetingSynth

/// Festival voices: the second engine, so synthetic meetings have timbres that differ like people's.
@Suite struct FestivalVoiceTests {
    let festivalVoices = VoiceSpec.presets.filter { $0.engine == .festival }

    @Test func everyPresetFestivalVoiceSpeaksTrimmedAudio() throws {
        #expect(festivalVoices.count == 3)
        let keys = festivalVoices.flatMap { voice in ["meeting", "budget"].map { WordKey(voice: voice, word: $0) } }
        let rendered = try WordRenderer(config: .default).render(keys)
        #expect(Set(rendered.keys) == Set(keys))
        for (key, samples) in rendered {
            let seconds = Double(samples.count) / 16_000
            #expect((0.15 ... 1.5).contains(seconds), "\(key.voice.voice) '\(key.word)' lasts \(seconds) s")
            let peak = samples.map(abs).max() ?? 0
            #expect(peak > 0.05, "\(key.voice.voice) '\(key.word)' is too quiet: peak \(peak)")
            // Trimmed: the first and last 5 ms are part of the word, not leading silence.
            #expect(samples.prefix(80).map(abs).max()! > 0.003 || samples.dropFirst(80).prefix(160).map(abs).max()! > 0.003)
        }
    }

    @Test func slowerFestivalSpeedStretchesDiphoneWords() throws {
        let diphone = try #require(festivalVoices.first { $0.voice.hasSuffix("_diphone") })
        var slow = diphone
        slow.speed = 110
        var fast = diphone
        fast.speed = 220
        let rendered = try WordRenderer(config: .default).render([WordKey(voice: slow, word: "conversation"), WordKey(voice: fast, word: "conversation")])
        let slowCount = rendered[WordKey(voice: slow, word: "conversation")]!.count
        let fastCount = rendered[WordKey(voice: fast, word: "conversation")]!.count
        #expect(Double(slowCount) > 1.4 * Double(fastCount))
    }

    @Test func twoSpeakerMeetingsMixBothEngines() throws {
        let script = try MeetingScript.generate(seed: 3, speakerCount: 2, turnCount: 4)
        #expect(Set(script.speakers.map(\.voice.engine)) == [.espeak, .festival])
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 3)
        let speakers = Set(meeting.words.map(\.speaker))
        #expect(speakers == Set(script.speakers.map(\.id)))
    }

    @Test func unknownVoiceAndMissingProgramHaveCodes() throws {
        let bogus = VoiceSpec(voice: "no_such_voice_xyz", pitch: 50, speed: 170, engine: .festival)
        #expect { _ = try WordRenderer(config: .default).render([WordKey(voice: bogus, word: "hello")]) } throws: {
            ($0 as? SynthError)?.code == .festivalFailed
        }
        let missing = WordRenderer(config: SynthConfig(festivalExecutable: "no-such-festival-binary"))
        #expect { _ = try missing.render([WordKey(voice: festivalVoices[0], word: "hello")]) } throws: {
            ($0 as? SynthError)?.code == .festivalNotFound
        }
    }

    @Test func voiceSpecsWithoutAnEngineDecodeAsEspeak() throws {
        let old = Data(#"{"voice":"en-us+m3","pitch":35,"speed":165}"#.utf8)
        let voice = try JSONDecoder().decode(VoiceSpec.self, from: old)
        #expect(voice.engine == .espeak)
        let roundTrip = try JSONDecoder().decode(VoiceSpec.self, from: JSONEncoder().encode(festivalVoices[1]))
        #expect(roundTrip == festivalVoices[1])
    }
}

/// `speakersync synth`'s folder layout, which `speakersync eval` reads like a real corpus.
@Suite struct MeetingSetTests {
    @Test func writesAudioTruthAndReferenceFilesThatAgree() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("meeting-set-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = MeetingSetConfig(speakerCount: 3, meetingCount: 2, turnCount: 5, seed: 40)
        var durations: [String: Double] = [:]
        let ids = try MeetingSet.write(config, to: directory) { id, meeting in durations[id] = meeting.durationSeconds }
        #expect(ids == ["synth3-00", "synth3-01"])
        let rttm = try RTTMFile.decode(String(contentsOf: directory.appendingPathComponent("reference.rttm"), encoding: .utf8))
        #expect(rttm.count == 10)
        let uem = try String(contentsOf: directory.appendingPathComponent("reference.uem"), encoding: .utf8)
            .split(separator: "\n").map { $0.split(separator: " ") }
        #expect(uem.map { String($0[0]) } == ids)
        for (index, id) in ids.enumerated() {
            let words = try WordsFile.decode(Data(contentsOf: directory.appendingPathComponent("words/\(id).json"))).words
            #expect(!words.isEmpty && words.allSatisfy { $0.speaker != nil })
            #expect(abs(Double(uem[index][3])! - durations[id]!) < 0.001)
            let audio = try Data(contentsOf: directory.appendingPathComponent("\(id).wav"))
            #expect(audio.count == 44 + Int((durations[id]! * 16_000).rounded()) * 2)
            // Regenerating one meeting alone from its seed gives the same words.
            let again = try MeetingSynthesizer(config: config.synth).synthesize(
                MeetingScript.generate(seed: 40 + UInt64(index), speakerCount: 3, turnCount: 5), seed: 40 + UInt64(index))
            #expect(again.wordsFile().words == words)
        }
    }
}
