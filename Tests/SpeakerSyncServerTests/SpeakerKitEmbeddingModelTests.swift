import Foundation
import Logging
import PluginHost
import Testing
import TestSupport

/// speakerkit with a sherpa-onnx embedding model in place of GE2E (`speakerkit.NAME`), through the real
/// dlopen'd plugin and the real library on the generated stand-in models: configured by the provider
/// config's 'speakerkit' section or by SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL, sessions embed in the
/// model's space, GE2E stays `speakerkit`; the vendored CAM++ is `speakerkit.campplus` with no configuration.
@Suite(.serialized) struct SpeakerKitEmbeddingModelTests {
    static func registry(section: String?) throws -> PluginRegistry {
        let configuration = ProviderConfiguration(sections: section.map { ["speakerkit": $0] } ?? [:])
        return try TestPlugins.freshRegistry("speakersync-speakerkit", configuration: configuration)
    }

    static func configured() throws -> PluginRegistry {
        let models = try TestModels.sherpaOnnx()
        return try registry(section: """
            {"embedding_models": {"standin": "\(models.appendingPathComponent("embedding.onnx").path)",
                                  "calibrated": {"path": "\(models.appendingPathComponent("embedding.onnx").path)",
                                                 "thresholds": {"speaker": 0.45, "cluster": 0.3, "switch_penalty": 0.5}},
                                  "broken": "\(models.appendingPathComponent("bad-embedding-no-framework.onnx").path)"}}
            """)
    }

    @Test func eachConfiguredModelIsAProviderBesideGE2E() throws {
        let registry = try Self.configured()
        let ids = Set(registry.providers.map(\.id))
        #expect(ids.isSuperset(of: ["speakerkit", "speakerkit.standin", "speakerkit.calibrated"]))
        #expect(!ids.contains("speakerkit.broken"), "a model the loaders refuse is not offered")
        let standin = try #require(registry.provider(id: "speakerkit.standin"))
        #expect(standin.unavailableReason == nil)
        #expect(standin.description.contains("64 dimensions"))
        #expect(standin.description.contains("not calibrated for this model"))
        #expect(registry.provider(id: "speakerkit.calibrated")?.description.contains("thresholds calibrated for this model: cluster 0.3, speaker 0.45, switch_penalty 0.5") == true)
        #expect(registry.provider(id: "speakerkit")?.name.contains("GE2E") == true)
    }

    @Test func sessionsEmbedInTheModelsSpaceAndGE2EProfilesAreLeftOut() throws {
        let registry = try Self.configured()
        let meeting = SherpaOnnxPluginTests.meeting
        let first = try #require(meeting.turns.first)
        let voice = Array(meeting.audio[Int(first.startSeconds * 16_000) ..< Int(first.endSeconds * 16_000)])
        let modelEmbedding = try registry.embedVoice(providerID: "speakerkit.standin", samples: voice)
        let ge2eEmbedding = try registry.embedVoice(providerID: "speakerkit", samples: voice)
        #expect(modelEmbedding.count == 64)
        #expect(ge2eEmbedding.count == 256)

        let known = [
            KnownSpeaker(speaker: 1_000_001, profile: SpeakerProfile(embedding: modelEmbedding, durationSeconds: 8), isPermanent: true, name: "Ada"),
            KnownSpeaker(speaker: 2_000_009, profile: SpeakerProfile(embedding: ge2eEmbedding, durationSeconds: 8), isPermanent: true, name: "Grace"),
        ]
        let instance = try registry.makeInstance(providerID: "speakerkit.standin", sessionID: "model", optionsJSON: #"{"max_speakers": 3}"#, knownSpeakers: known)
        var turns: [UInt64: ProviderTurn] = [:]
        let (live, _) = try SherpaOnnxPluginTests.run(instance, audio: meeting.audio, turns: &turns)
        #expect(!live.isEmpty)
        let speakers = Set(turns.values.map(\.speaker))
        #expect(!turns.isEmpty)
        #expect(speakers.contains(1_000_001), "the voice enrolled with this model is recognised: \(speakers)")
        #expect(!speakers.contains(2_000_009), "a GE2E profile is not compared with the model's embeddings")
        for speaker in speakers {
            #expect(try instance.speakerProfile(speaker: speaker)?.embedding.count == 64)
        }
    }

    @Test func badOptionsAreRefusedAsForSpeakerkit() throws {
        let registry = try Self.configured()
        do {
            _ = try registry.makeInstance(providerID: "speakerkit.standin", sessionID: "s", optionsJSON: #"{"num_speaker": 2}"#)
            Issue.record("a typo was accepted")
        } catch {
            #expect(error.code == .invalidOptions)
            #expect(error.message.contains("unknown option 'num_speaker'"))
        }
    }

    @Test func theSherpaOnnxEmbeddingVariableConfiguresItWithoutAFile() throws {
        let models = try TestModels.sherpaOnnx()
        setenv("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL", models.appendingPathComponent("embedding-3dspeaker.onnx").path, 1)
        defer { unsetenv("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL") }
        let registry = try Self.registry(section: nil)
        let provider = try #require(registry.provider(id: "speakerkit.embedding-3dspeaker"))
        #expect(provider.description.contains("48 dimensions"))
    }

    @Test func withoutConfigurationGE2EAndTheVendoredCamPlusAreOffered() throws {
        unsetenv("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL")
        let registry = try Self.registry(section: nil)
        #expect(registry.providers.filter { $0.id.hasPrefix("speakerkit") }.map(\.id) == ["speakerkit", "speakerkit.campplus"])
        let campplus = try #require(registry.provider(id: "speakerkit.campplus"))
        #expect(campplus.unavailableReason == nil)
        #expect(campplus.description.contains("192 dimensions"))
        #expect(campplus.description.contains("uncounted_voice_margin 0.2"), "its calibrated finalize rule: \(campplus.description)")
    }

    @Test func anOperatorsModelNamedCampplusTakesTheVendoredOnesPlace() throws {
        let models = try TestModels.sherpaOnnx()
        let registry = try Self.registry(section: #"{"embedding_models": {"campplus": "\#(models.appendingPathComponent("embedding.onnx").path)"}}"#)
        let campplus = try #require(registry.provider(id: "speakerkit.campplus"))
        #expect(registry.providers.filter { $0.id == "speakerkit.campplus" }.count == 1)
        #expect(campplus.description.contains("64 dimensions"), "the operator's stand-in, not the vendored CAM++: \(campplus.description)")
    }

    /// Real speech through the vendored CAM++: two voices of the synthetic meeting are told apart,
    /// and profiles are in CAM++'s 192-dimensional space.
    @Test func theVendoredCamPlusLabelsARealSession() throws {
        unsetenv("SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL")
        let registry = try Self.registry(section: nil)
        let meeting = SherpaOnnxPluginTests.meeting
        let instance = try registry.makeInstance(providerID: "speakerkit.campplus", sessionID: "campplus", optionsJSON: "{}")
        var turns: [UInt64: ProviderTurn] = [:]
        let (live, _) = try SherpaOnnxPluginTests.run(instance, audio: meeting.audio, turns: &turns)
        #expect(!live.isEmpty)
        let speakers = Set(turns.values.map(\.speaker))
        #expect(speakers.count == Set(meeting.turns.map(\.speaker)).count, "speakers found: \(speakers.count)")
        for speaker in speakers {
            #expect(try instance.speakerProfile(speaker: speaker)?.embedding.count == 192)
        }
    }
}
