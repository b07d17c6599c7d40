import SherpaOnnxSpeakers
import Testing

/// The provider config's sherpa-onnx section: models by name, each with the thresholds calibrated for it.
@Suite struct SherpaOnnxModelCatalogTests {
    @Test func aModelsCalibratedThresholdsMayIncludeTheUncountedVoiceMargin() throws {
        let catalog = try SherpaOnnxModelCatalog.parse(section: """
            {"embedding_models": {"campplus": {"path": "/m/campplus.onnx",
                                               "thresholds": {"speaker": 0.855, "uncounted_voice_margin": 0.2}}}}
            """, environment: [:])
        #expect(catalog.embeddingModels == [.init(name: "campplus", path: "/m/campplus.onnx", thresholds: ["speaker": 0.855, "uncounted_voice_margin": 0.2])])
    }

    @Test func anUnknownThresholdIsRefusedWithTheNamesItMayHave() {
        do {
            _ = try SherpaOnnxModelCatalog.parse(section: #"{"embedding_models": {"m": {"path": "/m.onnx", "thresholds": {"uncounted_margin": 0.2}}}}"#,
                                                 environment: [:])
            Issue.record("a misspelt threshold was accepted")
        } catch {
            #expect(error.code == .invalidModel)
            #expect(error.message.contains("threshold 'uncounted_margin'") && error.message.contains("uncounted_voice_margin"), "\(error.message)")
        }
    }
}
