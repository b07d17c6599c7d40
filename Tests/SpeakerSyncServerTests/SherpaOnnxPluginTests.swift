import Foundation
import Logging
import MeetingSynth
import PluginHost
import Testing
import TestSupport

/// The `sherpa-onnx` plugin loaded with dlopen, the real sherpa-onnx library running the stand-in
/// models the tests generate (TestModels): configuration, availability, options, the live turns, the
/// offline pass that revises them at finalize, profiles and enrolment embeddings. The stand-ins'
/// outputs mean little, so these check the paths and the bookkeeping, not accuracy.
@Suite(.serialized) struct SherpaOnnxPluginTests {
    static let pluginID = "speakersync-sherpa-onnx"

    /// A config section naming the stand-ins: the default model, a 3D-Speaker-layout one and one the
    /// checks refuse.
    static func section(models: URL) -> String {
        """
        {"segmentation_model": "\(models.appendingPathComponent("segmentation.onnx").path)",
         "embedding_models": {"standin": "\(models.appendingPathComponent("embedding.onnx").path)",
                              "threedspeaker": {"path": "\(models.appendingPathComponent("embedding-3dspeaker.onnx").path)",
                                                "thresholds": {"speaker": 0.5, "offline": 0.7}},
                              "broken": "\(models.appendingPathComponent("bad-embedding-dimension.onnx").path)"},
         "default_embedding_model": "standin"}
        """
    }

    static func registry(section: String?) throws -> PluginRegistry {
        let configuration = ProviderConfiguration(sections: section.map { ["sherpa-onnx": $0] } ?? [:])
        return try TestPlugins.freshRegistry(pluginID, configuration: configuration)
    }

    static func configured() throws -> PluginRegistry {
        try registry(section: section(models: try TestModels.sherpaOnnx()))
    }

    /// Two synthetic voices taking turns (16 kHz).
    static let meeting: SynthesizedMeeting = {
        let script = try! MeetingScript.generate(seed: 31, speakerCount: 2, turnCount: 6)
        return try! MeetingSynthesizer().synthesize(script, seed: 31)
    }()

    /// Pushes `audio` in 100 ms chunks, applying every pulled turn to `turns` (id → turn), and returns
    /// how many turns were live before finalize; then finalizes and applies its turns too.
    static func run(_ instance: DiarizationInstance, audio: [Float], turns: inout [UInt64: ProviderTurn]) throws -> (live: [UInt64: ProviderTurn], final: [ProviderTurn]) {
        func apply(_ pulled: [ProviderTurn]) {
            for turn in pulled {
                if turn.isRemoved { turns[turn.turnID] = nil } else { turns[turn.turnID] = turn }
            }
        }
        for start in stride(from: 0, to: audio.count, by: 1600) {
            try instance.push(samples: Array(audio[start ..< min(audio.count, start + 1600)]))
            apply(try instance.pullTurns())
        }
        let live = turns
        let final = try instance.finalize()
        apply(final)
        return (live, final)
    }

    @Test func configuredModelsBecomeProvidersAndABrokenOneIsListedUnavailable() throws {
        let registry = try Self.configured()
        let ids = registry.providers.map(\.id)
        #expect(ids.contains("sherpa-onnx"))
        #expect(ids.contains("sherpa-onnx.threedspeaker"))
        #expect(ids.contains("sherpa-onnx.broken"))
        let standin = try #require(registry.provider(id: "sherpa-onnx"))
        #expect(standin.unavailableReason == nil)
        #expect(standin.name.contains("standin"))
        #expect(standin.description.contains("64 dimensions"))
        #expect(standin.licence.contains("Apache-2.0"))
        #expect(standin.requirements.contains("SPEAKERSYNC_SHERPA_ONNX_SEGMENTATION_MODEL"))
        #expect(!standin.measured.isEmpty)
        #expect(registry.provider(id: "sherpa-onnx.threedspeaker")?.unavailableReason == nil)
        let broken = try #require(registry.provider(id: "sherpa-onnx.broken")?.unavailableReason)
        #expect(broken.hasPrefix("cannot load its models: "), "\(broken)")
        #expect(broken.contains("128"), "the reason names the declared dimension: \(broken)")
        do {
            _ = try registry.makeInstance(providerID: "sherpa-onnx.broken", sessionID: "s", optionsJSON: "{}")
            Issue.record("a session started on a provider whose model cannot load")
        } catch {
            #expect(error.code == .providerUnavailable)
            #expect(error.message == broken)
        }
    }

    @Test func withoutModelsTheProviderLoadsAndSaysWhatToSet() throws {
        // The variables would configure it; this test is about their absence.
        unsetenv("SPEAKERSYNC_SHERPA_ONNX_SEGMENTATION_MODEL")
        unsetenv("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL")
        let registry = try Self.registry(section: nil)
        let reason = try #require(registry.provider(id: "sherpa-onnx")?.unavailableReason)
        #expect(reason.contains("SPEAKERSYNC_SHERPA_ONNX_SEGMENTATION_MODEL"))
        #expect(reason.contains("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL"))
        #expect(reason.contains("--provider-config"))
        do {
            _ = try registry.makeInstance(providerID: "sherpa-onnx", sessionID: "s", optionsJSON: "{}")
            Issue.record("a session started without models")
        } catch {
            #expect(error.code == .providerUnavailable)
        }
    }

    @Test(arguments: [
        (#"{"segmentation_model": 3}"#, "segmentation_model must be a file path"),
        (#"{"segmentation_model": "/x.onnx", "embedding_models": {"Bad Name": "/y.onnx"}}"#, "embedding model name 'Bad Name' must be 1 to 40 of a-z 0-9 _ -"),
        (#"{"segmentation_model": "/x.onnx", "embedding_model": "/y.onnx"}"#, "unknown setting 'embedding_model'"),
        (#"{"segmentation_model": "/x.onnx", "embedding_models": {"a": {"path": "/y.onnx", "thresholds": {"speaker": 3}}}}"#, "threshold 'speaker' must be"),
        (#"{"segmentation_model": "/missing/segmentation.onnx", "embedding_models": {"a": "/missing/embedding.onnx"}}"#, "cannot load its models: "),
    ])
    func aConfigItCannotUseIsTheReasonItIsUnavailable(section: String, expected: String) throws {
        let registry = try Self.registry(section: section)
        let reason = registry.provider(id: "sherpa-onnx")?.unavailableReason ?? registry.provider(id: "sherpa-onnx.a")?.unavailableReason
        #expect(reason?.contains(expected) == true, "\(reason ?? "available")")
    }

    @Test(arguments: [
        (#"{"offline_threshold": 3}"#, "offline_threshold must be a number in 0.01...2.0"),
        (#"{"offline_pass": 2}"#, "offline_pass must be a number in 0.0...1.0"),
        (#"{"model": "threedspeaker"}"#, "unknown option 'model'"),
        (#"{"num_speakers": 0}"#, "num_speakers must be an integer from 1 to 64"),
        (#"{"min_speakers": 3, "max_speakers": 2}"#, "min_speakers (3) is above max_speakers (2)"),
    ])
    func badOptionsAreRefusedWithTheReason(options: String, expected: String) throws {
        let registry = try Self.configured()
        do {
            _ = try registry.makeInstance(providerID: "sherpa-onnx", sessionID: "s", optionsJSON: options)
            Issue.record("options \(options) were accepted")
        } catch {
            #expect(error.code == .invalidOptions)
            #expect(error.message.contains(expected), "\(error.message)")
        }
    }

    @Test func liveTurnsAreRevisedByTheOfflinePassAtFinalize() throws {
        let registry = try Self.configured()
        let instance = try registry.makeInstance(providerID: "sherpa-onnx", sessionID: "offline", optionsJSON: #"{"num_speakers": 2}"#)
        var turns: [UInt64: ProviderTurn] = [:]
        let (live, final) = try Self.run(instance, audio: Self.meeting.audio, turns: &turns)
        #expect(!live.isEmpty, "live turns arrive before finalize")
        #expect(live.keys.allSatisfy { $0 < 1 << 62 })
        // Every live turn the host holds is withdrawn, and the offline pass's turns take their place.
        let removed = Set(final.filter(\.isRemoved).map(\.turnID))
        #expect(removed == Set(live.keys))
        #expect(!turns.isEmpty)
        #expect(turns.keys.allSatisfy { $0 >= 1 << 62 }, "only offline turns remain")
        let duration = Double(Self.meeting.audio.count) / 16_000
        for turn in turns.values {
            #expect(turn.startSeconds >= 0 && turn.startSeconds < turn.endSeconds && turn.endSeconds <= duration + 0.1)
            #expect((0 ... 1).contains(turn.confidence))
        }
        // Offline speakers take the live labels they overlap: no label the session never used appears
        // unless the offline pass found more speakers than live tracking did.
        let liveSpeakers = Set(live.values.map(\.speaker))
        let finalSpeakers = Set(turns.values.map(\.speaker))
        #expect(!liveSpeakers.isDisjoint(with: finalSpeakers))
        // Each final speaker has a profile in the model's space (64 dimensions), unit length.
        for speaker in finalSpeakers {
            let profile = try #require(try instance.speakerProfile(speaker: speaker))
            #expect(profile.embedding.count == 64)
            let norm = profile.embedding.reduce(0) { $0 + $1 * $1 }.squareRoot()
            #expect(abs(norm - 1) < 1e-3)
            #expect(profile.durationSeconds > 0)
        }
    }

    @Test func withTheOfflinePassOffTheLiveTurnsStand() throws {
        let registry = try Self.configured()
        let instance = try registry.makeInstance(providerID: "sherpa-onnx.threedspeaker", sessionID: "live-only", optionsJSON: #"{"offline_pass": 0}"#)
        var turns: [UInt64: ProviderTurn] = [:]
        let (live, _) = try Self.run(instance, audio: Self.meeting.audio, turns: &turns)
        // The live diarizer's own finalize may still merge and re-cut its turns; no offline turn appears.
        #expect(!live.isEmpty)
        #expect(!turns.isEmpty)
        #expect(turns.keys.allSatisfy { $0 < 1 << 62 })
    }

    @Test func silenceGivesNoTurnsAndFinalizeKeepsItThatWay() throws {
        let registry = try Self.configured()
        let instance = try registry.makeInstance(providerID: "sherpa-onnx", sessionID: "silence", optionsJSON: "{}")
        var turns: [UInt64: ProviderTurn] = [:]
        let (live, final) = try Self.run(instance, audio: [Float](repeating: 0, count: 48_000), turns: &turns)
        #expect(live.isEmpty)
        #expect(final.isEmpty)
    }

    @Test func enrolmentEmbeddingsComeFromTheModelAndAreRecognisedInASession() throws {
        let registry = try Self.configured()
        let meeting = Self.meeting
        // Three seconds or more of one voice: its first turns.
        let first = try #require(meeting.turns.first)
        let samples = Array(meeting.audio[Int(first.startSeconds * 16_000) ..< Int(first.endSeconds * 16_000)])
        let embedding = try registry.embedVoice(providerID: "sherpa-onnx", samples: samples)
        #expect(embedding.count == 64)
        do {
            _ = try registry.embedVoice(providerID: "sherpa-onnx", samples: [Float](repeating: 0, count: 32_000))
            Issue.record("silence was enrolled")
        } catch {
            #expect(error.message.contains("s of speech found; at least 1 s is needed"), "\(error.message)")
        }
        // A known speaker of another model's dimension is left out, not a crash; one of this model's is used.
        let known = [
            KnownSpeaker(speaker: 1_000_001, profile: SpeakerProfile(embedding: embedding, durationSeconds: 8), isPermanent: true, name: "Ada"),
            KnownSpeaker(speaker: 2_000_005, profile: SpeakerProfile(embedding: [Float](repeating: 0.1, count: 256), durationSeconds: 8), isPermanent: true),
        ]
        let instance = try registry.makeInstance(providerID: "sherpa-onnx", sessionID: "known", optionsJSON: #"{"offline_pass": 0}"#, knownSpeakers: known)
        var turns: [UInt64: ProviderTurn] = [:]
        _ = try Self.run(instance, audio: meeting.audio, turns: &turns)
        let speakers = Set(turns.values.map(\.speaker))
        #expect(speakers.contains(1_000_001), "the enrolled voice is recognised: \(speakers)")
        #expect(!speakers.contains(2_000_005))
    }
}

extension SherpaOnnxPluginTests {
    /// pyannote's segmentation can fold two voices into one local speaker (the stand-in segmentation
    /// model does it always: one local speaker wherever it is loud); the live result stands then.
    @Test func anOfflinePassThatFindsFewerSpeakersThanTheLiveResultDoesNotReplaceIt() throws {
        let registry = try Self.configured()
        func finalSpeakers(_ options: String) throws -> (live: Set<Int32>, final: Set<Int32>, offline: Bool) {
            let instance = try registry.makeInstance(providerID: "sherpa-onnx", sessionID: "count", optionsJSON: options)
            var turns: [UInt64: ProviderTurn] = [:]
            let (live, _) = try Self.run(instance, audio: Self.meeting.audio, turns: &turns)
            return (Set(live.values.map(\.speaker)), Set(turns.values.map(\.speaker)), turns.keys.contains { $0 >= 1 << 62 })
        }
        let replaced = try finalSpeakers(#"{"prefer_live_count": 0}"#)
        let kept = try finalSpeakers(#"{"prefer_live_count": 1}"#)
        #expect(replaced.offline)
        #expect(replaced.final.count < kept.final.count)
        #expect(!kept.offline)
        #expect(kept.final.count >= 2)
    }

    /// A session longer than offline_max_seconds keeps its live result: the pass would outrun the host's
    /// finalize deadline.
    @Test func aSessionLongerThanTheOfflineLimitKeepsItsLiveTurns() throws {
        let registry = try Self.configured()
        let instance = try registry.makeInstance(providerID: "sherpa-onnx", sessionID: "long",
                                                 optionsJSON: #"{"num_speakers": 2, "offline_max_seconds": 10}"#)
        var turns: [UInt64: ProviderTurn] = [:]
        _ = try Self.run(instance, audio: Self.meeting.audio, turns: &turns)
        #expect(Double(Self.meeting.audio.count) / 16_000 > 10)
        #expect(!turns.isEmpty)
        #expect(turns.keys.allSatisfy { $0 < 1 << 62 }, "no offline turn")
    }
}
