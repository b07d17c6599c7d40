import SherpaOnnxSpeakers
import Testing
import TestSupport

/// A model checked at once and opened by its first use, once per process (the real library on the
/// generated stand-in models).
@Suite struct LazyEmbeddingExtractorTests {
    @Test func theModelIsCheckedNowAndOpenedByItsFirstUseOnly() throws {
        let lazy = try LazyEmbeddingExtractor(modelPath: SherpaOnnxSpeakersTests.model("embedding-3dspeaker.onnx"))
        #expect(lazy.dimension == 48, "known from the metadata before the model is opened")
        #expect(!lazy.isOpened)
        let first = try lazy.loaded()
        #expect(lazy.isOpened)
        #expect(first.dimension == 48)
        #expect(try lazy.loaded() === first, "opened once, then shared")
        #expect(try first.embed(SherpaOnnxSpeakersTests.voice(pitch: 130, seconds: 1)).count == 48)
    }

    @Test func aFileThatIsNoEmbeddingModelIsRefusedBeforeAnythingIsOpened() throws {
        #expect(throws: SherpaOnnxSpeakersError.self) { try LazyEmbeddingExtractor(modelPath: "/nonexistent/model.onnx") }
        let path = try SherpaOnnxSpeakersTests.model("bad-embedding-no-framework.onnx")
        do throws(SherpaOnnxSpeakersError) {
            _ = try LazyEmbeddingExtractor(modelPath: path)
            Issue.record("a model without its framework was accepted")
        } catch {
            #expect(error.code == .invalidModel)
            #expect(error.message.contains("'framework' is missing"), "\(error.message)")
        }
    }
}
