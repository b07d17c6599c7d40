import Testing
import StreamingDiarization
@testable import DiarizationModels

@Suite struct EmbeddingModelThresholdsTests {
    @Test func calibratedValuesReplaceTheDefaultsAndTheRestStay() {
        let config = EmbeddingModelThresholds.diarizerConfig(["speaker": 0.597, "switch_penalty": 0.5])
        #expect(config.speakerThreshold == 0.597)
        #expect(config.switchPenalty == 0.5)
        #expect(config.embeddingThreshold == 0.4)  // the margin-loss default
        #expect(config.enrolledSpeakerThreshold == 0.35)
        // No calibrated switch penalty: speakerkit's stands.
        #expect(EmbeddingModelThresholds.diarizerConfig([:]).switchPenalty == DiarizerConfig.default.switchPenalty)
        #expect(EmbeddingModelThresholds.value("offline", in: [:]) == 0.5)
    }

    @Test func aCalibratedUncountedVoiceMarginReplacesSpeakerkits() {
        #expect(EmbeddingModelThresholds.diarizerConfig(["uncounted_voice_margin": 0.2]).uncountedVoiceMargin == 0.2)
        #expect(EmbeddingModelThresholds.diarizerConfig([:]).uncountedVoiceMargin == DiarizerConfig.default.uncountedVoiceMargin)
        // The vendored CAM++'s calibration sets it, and the catalog accepts the name from a config file.
        #expect(EmbeddingModelThresholds.diarizerConfig(VendoredCampPlus.thresholds).uncountedVoiceMargin == 0.2)
    }
}
