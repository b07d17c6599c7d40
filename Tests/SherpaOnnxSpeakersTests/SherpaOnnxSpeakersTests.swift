import Foundation
import SherpaOnnxSpeakers
import Testing
import TestSupport

/// sherpa-onnx 2.0.1's speaker APIs, the real library (vendor/, from scripts/setup) on the stand-in
/// models the tests generate: model files are checked before the library sees them (it would end the
/// process), embeddings tell two voices apart, the offline diarization finds speech and only speech.
@Suite struct SherpaOnnxSpeakersTests {
    static func model(_ name: String) throws -> String {
        try TestModels.sherpaOnnx().appendingPathComponent(name).path
    }

    /// A steady tone with its harmonics: a crude voice whose spectrum depends on its pitch.
    static func voice(pitch: Double, seconds: Double, amplitude: Double = 0.3) -> [Float] {
        (0 ..< Int(seconds * 16_000)).map { index in
            let t = Double(index) / 16_000
            let tone = (1 ... 4).reduce(0.0) { sum, harmonic in sum + sin(2 * .pi * pitch * Double(harmonic) * t) / Double(harmonic) }
            return Float(amplitude * tone / 2)
        }
    }

    static func cosine(_ a: [Float], _ b: [Float]) -> Float {
        let dot = zip(a, b).reduce(0) { $0 + $1.0 * $1.1 }
        let norms = (a.reduce(0) { $0 + $1 * $1 } * b.reduce(0) { $0 + $1 * $1 }).squareRoot()
        return norms > 0 ? dot / norms : 0
    }

    @Test func modelFilesAreReadWithoutTheLibrary() throws {
        let embedding = try OnnxModelDescription.read(path: Self.model("embedding.onnx"))
        #expect(embedding.metadata["framework"] == "wespeaker")
        #expect(embedding.metadata["output_dim"] == "64")
        #expect(embedding.inputs.map(\.name) == ["feats"])
        #expect(embedding.inputs.first?.dimensions == [nil, nil, 80])
        #expect(embedding.outputs.first?.dimensions == [nil, 64])
        #expect(try SherpaOnnxModelCheck.embeddingModel(embedding, path: "e") == 64)
        let segmentation = try OnnxModelDescription.read(path: Self.model("segmentation.onnx"))
        #expect(segmentation.metadata["num_classes"] == "7")
        #expect(segmentation.outputs.first?.dimensions == [nil, nil, 7])
        try SherpaOnnxModelCheck.segmentationModel(segmentation, path: "s")
    }

    /// Each of these would end the process inside sherpa-onnx (`_Exit`, a crash, or a heap overrun).
    @Test(arguments: [
        ("bad-embedding-no-framework.onnx", "its metadata 'framework' is missing"),
        ("bad-embedding-dimension.onnx", "its embedding output has 64 values but its metadata 'output_dim' says 128"),
        ("bad-not-onnx.onnx", "is not an ONNX model"),
        ("segmentation.onnx", "its metadata 'framework' is missing"),
    ])
    func badEmbeddingModelsAreRefusedWithWhatIsWrong(file: String, message: String) throws {
        let path = try Self.model(file)
        do {
            _ = try SpeakerEmbeddingExtractor(modelPath: path)
            Issue.record("\(file) was accepted")
        } catch {
            #expect(error.code == .invalidModel)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test(arguments: [
        ("bad-segmentation-no-num-classes.onnx", "its metadata 'num_classes' is missing"),
        ("bad-segmentation-wrong-classes.onnx", "its output has 5 classes; its metadata says 7"),
    ])
    func badSegmentationModelsAreRefusedWithWhatIsWrong(file: String, message: String) throws {
        let (segmentation, embedding) = (try Self.model(file), try Self.model("embedding.onnx"))
        do {
            _ = try OfflineSpeakerDiarizer(segmentationModelPath: segmentation, embeddingModelPath: embedding)
            Issue.record("\(file) was accepted")
        } catch {
            #expect(error.code == .invalidModel)
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func aMissingModelIsNamed() {
        #expect(throws: SherpaOnnxSpeakersError(.modelNotFound, "cannot read the model /nonexistent/model.onnx")) {
            try SpeakerEmbeddingExtractor(modelPath: "/nonexistent/model.onnx")
        }
    }

    @Test func aThreeDSpeakerModelLoadsAndRuns() throws {
        let extractor = try SpeakerEmbeddingExtractor(modelPath: Self.model("embedding-3dspeaker.onnx"))
        #expect(extractor.dimension == 48)
        #expect(extractor.model.metadata["framework"] == "3d-speaker")
        #expect(try extractor.embed(Self.voice(pitch: 130, seconds: 1)).count == 48)
    }

    @Test func embeddingsTellTwoVoicesApart() throws {
        let extractor = try SpeakerEmbeddingExtractor(modelPath: Self.model("embedding.onnx"))
        let low = try extractor.embed(Self.voice(pitch: 130, seconds: 1.5))
        let lowAgain = try extractor.embed(Self.voice(pitch: 131, seconds: 1.2, amplitude: 0.2))
        let high = try extractor.embed(Self.voice(pitch: 310, seconds: 1.5))
        #expect(low.count == extractor.dimension)
        let same = Self.cosine(low, lowAgain), different = Self.cosine(low, high)
        #expect(same > 0.9, "same voice \(same)")
        #expect(different < same - 0.2, "same \(same), different \(different)")
        #expect(throws: SherpaOnnxSpeakersError.self) { try extractor.embed([Float](repeating: 0.1, count: 100)) }
        #expect(throws: SherpaOnnxSpeakersError.self) { try extractor.embed([Float](repeating: .nan, count: 16_000)) }
    }

    @Test func theOfflineDiarizationFindsSpeechAndOnlySpeech() throws {
        let diarizer = try OfflineSpeakerDiarizer(segmentationModelPath: Self.model("segmentation.onnx"),
                                                  embeddingModelPath: Self.model("embedding.onnx"))
        #expect(diarizer.sampleRate == 16_000)
        // 2 s of one voice, 2 s of silence, 2 s of another, 2 s of silence, 2 s of the first.
        let silence = [Float](repeating: 0, count: 32_000)
        let audio = Self.voice(pitch: 130, seconds: 2) + silence + Self.voice(pitch: 310, seconds: 2) + silence + Self.voice(pitch: 130, seconds: 2)
        let segments = try audio.withUnsafeBufferPointer { try diarizer.process($0, clustering: .default) }
        #expect(!segments.isEmpty)
        #expect(segments == segments.sorted { $0.startSeconds < $1.startSeconds })
        for segment in segments {
            let middle = (segment.startSeconds + segment.endSeconds) / 2
            let inSpeech = [0.0 ..< 2.0, 4.0 ..< 6.0, 8.0 ..< 10.0].contains { $0.contains(middle) }
            #expect(inSpeech, "a segment in silence: \(segment)")
        }
        // Every stretch of speech is found.
        for stretch in [0.0 ..< 2.0, 4.0 ..< 6.0, 8.0 ..< 10.0] {
            #expect(segments.contains { $0.startSeconds < stretch.upperBound && $0.endSeconds > stretch.lowerBound })
        }
        // A known count is honoured; silence alone gives nothing.
        let two = try audio.withUnsafeBufferPointer { try diarizer.process($0, clustering: .init(speakerCount: 2)) }
        #expect(Set(two.map(\.speaker)).count <= 2)
        let nothing = try silence.withUnsafeBufferPointer { try diarizer.process($0, clustering: .default) }
        #expect(nothing.isEmpty)
    }
}
