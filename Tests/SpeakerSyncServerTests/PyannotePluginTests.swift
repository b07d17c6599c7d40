import Foundation
import Logging
import PluginHost
import SpeakerSyncAudio
import Testing
import TestSupport

/// The `pyannote` plugin loaded with dlopen, on the models scripts/setup installs (vendor/models:
/// pyannote segmentation-3.0, CAM++) and real speech (the shared two-person recording): it needs no
/// configuration, tells the two people apart, labels live before finalize, keeps an enrolled person's
/// label and refuses options that are not its own by name.
@Suite(.serialized) struct PyannotePluginTests {
    static func registry() throws -> PluginRegistry {
        try TestPlugins.freshRegistry("speakersync-pyannote", configuration: ProviderConfiguration(sections: [:]))
    }

    static func sample() throws -> (audio: [Float], turns: [(speaker: String, start: Double, end: Double)]) {
        let audio = try #require(TestData.file("sample/sample.wav"), "SPEAKERSYNC_TEST_DATA must point at the shared data")
        let rttm = try #require(TestData.file("sample/sample.rttm"))
        let turns = try String(contentsOf: rttm, encoding: .utf8).split(separator: "\n").compactMap { line -> (String, Double, Double)? in
            let fields = line.split(separator: " ")
            guard fields.count >= 8, fields[0] == "SPEAKER", let start = Double(fields[3]), let duration = Double(fields[4]) else { return nil }
            return (String(fields[7]), start, start + duration)
        }
        return (try WAVFile.read(contentsOf: audio).samples, turns)
    }

    @Test func servesWithoutConfiguration() throws {
        let registry = try Self.registry()
        let provider = try #require(registry.provider(id: "pyannote"))
        #expect(provider.unavailableReason == nil, "\(provider.unavailableReason ?? "")")
        #expect(provider.name.contains("segmentation-3.0"))
    }

    /// Without options: turns live before finalize, and the final turns cover the people's speech.
    @Test func labelsARealRecordingLiveAndAtFinalize() throws {
        let registry = try Self.registry()
        let (audio, reference) = try Self.sample()
        let instance = try registry.makeInstance(providerID: "pyannote", sessionID: "sample", optionsJSON: "")
        var turns: [UInt64: ProviderTurn] = [:]
        let (live, _) = try SherpaOnnxPluginTests.run(instance, audio: audio, turns: &turns)
        #expect(!live.isEmpty)
        #expect(!turns.isEmpty && turns.keys.allSatisfy { $0 >= 1 << 62 }, "finalize replaces the live turns")
        var covered = 0.0, total = 0.0
        for ref in reference {
            total += ref.end - ref.start
            for step in stride(from: ref.start, to: ref.end, by: 0.05) where turns.values.contains(where: { $0.startSeconds <= step && step < $0.endSeconds }) {
                covered += 0.05
            }
        }
        #expect(covered / total >= 0.8, "labelled \(covered) of \(total) s of speech")
    }

    /// Told there are two people, each person maps mostly onto a speaker of their own (the one-to-one
    /// mapping, the re-clustering and the frame aggregation on real speech).
    @Test func withTheirCountTwoPeopleGetTwoSpeakers() throws {
        let registry = try Self.registry()
        let (audio, reference) = try Self.sample()
        let instance = try registry.makeInstance(providerID: "pyannote", sessionID: "two", optionsJSON: #"{"num_speakers": 2}"#)
        var turns: [UInt64: ProviderTurn] = [:]
        _ = try SherpaOnnxPluginTests.run(instance, audio: audio, turns: &turns)
        let final = Array(turns.values)
        #expect(Set(final.map(\.speaker)).count == 2, "speakers \(Set(final.map(\.speaker)))")
        var mainSpeaker: [String: Int32] = [:]
        for person in Set(reference.map(\.speaker)) {
            var seconds: [Int32: Double] = [:]
            for ref in reference where ref.speaker == person {
                for turn in final {
                    seconds[turn.speaker, default: 0] += max(0, min(ref.end, turn.endSeconds) - max(ref.start, turn.startSeconds))
                }
            }
            mainSpeaker[person] = seconds.max { $0.value < $1.value }?.key
        }
        #expect(Set(mainSpeaker.values).count == 2, "\(mainSpeaker)")
    }

    /// A person enrolled with the provider's own embedding keeps their label in a session.
    @Test func anEnrolledPersonIsRecognised() throws {
        let registry = try Self.registry()
        let (audio, reference) = try Self.sample()
        let person = try #require(reference.max { $0.end - $0.start < $1.end - $1.start })
        let voice = Array(audio[Int(person.start * 16_000) ..< Int(person.end * 16_000)])
        let embedding = try registry.embedVoice(providerID: "pyannote", samples: voice)
        #expect(embedding.count == 192)
        let known = [KnownSpeaker(speaker: 4_000_001, profile: SpeakerProfile(embedding: embedding, durationSeconds: person.end - person.start),
                                  isPermanent: true, name: "Ada")]
        let instance = try registry.makeInstance(providerID: "pyannote", sessionID: "enrolled", optionsJSON: "", knownSpeakers: known)
        var turns: [UInt64: ProviderTurn] = [:]
        let (live, _) = try SherpaOnnxPluginTests.run(instance, audio: audio, turns: &turns)
        #expect(live.values.contains { $0.speaker == 4_000_001 }, "live: \(Set(live.values.map(\.speaker)))")
        #expect(turns.values.contains { $0.speaker == 4_000_001 }, "final: \(Set(turns.values.map(\.speaker)))")
    }

    @Test func optionsThatAreNotItsOwnAreRefusedByName() throws {
        let registry = try Self.registry()
        #expect(throws: Never.self) { try registry.checkOptions(providerID: "pyannote", optionsJSON: #"{"num_speakers": 2, "step_seconds": 0.5}"#) }
        for (options, named) in [(#"{"switch_penalty": 0.3}"#, "switch_penalty"), (#"{"step_seconds": 6, "segmentation_window_seconds": 5}"#, "step_seconds"),
                                 (#"{"new_speaker_distance": 7}"#, "new_speaker_distance")] {
            do {
                try registry.checkOptions(providerID: "pyannote", optionsJSON: options)
                Issue.record("\(options) was accepted")
            } catch {
                #expect(error.code == .invalidOptions)
                #expect(error.message.contains(named), "\(error.message)")
            }
        }
    }

    /// A count hint holds: asked for one speaker, the session has one.
    @Test func anExactCountIsKept() throws {
        let registry = try Self.registry()
        let (audio, _) = try Self.sample()
        let instance = try registry.makeInstance(providerID: "pyannote", sessionID: "one", optionsJSON: #"{"num_speakers": 1}"#)
        var turns: [UInt64: ProviderTurn] = [:]
        _ = try SherpaOnnxPluginTests.run(instance, audio: audio, turns: &turns)
        #expect(Set(turns.values.map(\.speaker)).count == 1)
    }
}
