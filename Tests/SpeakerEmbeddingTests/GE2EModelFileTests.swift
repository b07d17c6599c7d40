import Foundation
import Logging
import SpeakerEmbedding
import Testing

/// The loader's refusals, each with its own code, on real damaged copies of the converted model.
@Suite struct GE2EModelFileTests {
    func load(_ bytes: Data) throws {
        let folder = try EncoderFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("ge2e.bin")
        try bytes.write(to: url)
        _ = try SpeakerEncoder(config: SpeakerEmbeddingConfig(modelPath: url), logger: Logger(label: "test"))
    }

    func code(_ body: () throws -> Void) -> SpeakerEmbeddingError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? SpeakerEmbeddingError)?.code
        }
    }

    func realModel() throws -> Data {
        try Data(contentsOf: EncoderFixture.encoder().modelURL)
    }

    @Test func missingFileIsModelNotFound() {
        let url = URL(fileURLWithPath: "/nonexistent-\(getpid())/ge2e.bin")
        #expect(code { _ = try SpeakerEncoder(config: SpeakerEmbeddingConfig(modelPath: url), logger: Logger(label: "test")) } == .modelNotFound)
    }

    @Test func emptyModelsFolderIsModelNotFound() throws {
        let folder = try EncoderFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(code { _ = try GE2EModelLocator.locate(environment: [GE2EModelLocator.environmentVariable: folder.path]) } == .modelNotFound)
    }

    @Test func modelsFolderFromTheEnvironmentIsUsed() throws {
        let model = try EncoderFixture.encoder().modelURL
        let found = try GE2EModelLocator.locate(environment: [GE2EModelLocator.environmentVariable: model.deletingLastPathComponent().path])
        #expect(found.standardizedFileURL == model.standardizedFileURL)
    }

    @Test func badMagicIsRejected() throws {
        var bytes = try realModel()
        bytes[0] = UInt8(ascii: "X")
        #expect(code { try load(bytes) } == .badMagic)
        #expect(code { try load(Data("PK\u{3}\u{4} a zip, not a converted model".utf8)) } == .badMagic)
    }

    @Test func otherVersionIsRejected() throws {
        var bytes = try realModel()
        bytes[4] = 2
        #expect(code { try load(bytes) } == .unsupportedVersion)
    }

    @Test func truncatedFilesAreRejected() throws {
        let bytes = try realModel()
        #expect(code { try load(bytes.prefix(12)) } == .truncated)
        #expect(code { try load(bytes.prefix(300)) } == .truncated)
        #expect(code { try load(bytes.prefix(bytes.count - 1)) } == .truncated)
        #expect(code { try load(bytes.prefix(bytes.count / 2)) } == .truncated)
    }

    @Test func damagedDataFailsTheChecksum() throws {
        var bytes = try realModel()
        bytes[bytes.count - 100] ^= 0x40
        #expect(code { try load(bytes) } == .checksumMismatch)
    }

    @Test func renamedTensorIsMissing() throws {
        var bytes = try realModel()
        // The first entry's name starts at byte 22 ("lstm.weight_ih_l0"); the header is outside the checksum.
        try #require(String(decoding: bytes[22 ..< 39], as: UTF8.self) == "lstm.weight_ih_l0")
        bytes[22] = UInt8(ascii: "x")
        #expect(code { try load(bytes) } == .missingTensor)
    }

    @Test func unalignedOffsetIsMalformed() throws {
        var bytes = try realModel()
        // First entry: u16 length + 17 name bytes + u8 rank + 2 × u32 dims, then its u64 offset.
        let offsetPosition = 20 + 2 + 17 + 1 + 8
        bytes[offsetPosition] &+= 4
        #expect(code { try load(bytes) } == .malformedHeader)
    }

    @Test func realModelLoadsAndSaysWhereFrom() throws {
        let encoder = try EncoderFixture.encoder()
        #expect(encoder.modelURL.lastPathComponent == GE2EModelLocator.fileName)
        #expect(code { _ = try encoder.embed(partial: [Float](repeating: 0.1, count: 100), sampleRate: 16_000) } == .invalidInput)
        #expect(code { _ = try encoder.embed(partial: [Float](repeating: 0.1, count: 25_600), sampleRate: 44_100) } == .unsupportedSampleRate)
        #expect(code { _ = try SpeakerEncoder(config: SpeakerEmbeddingConfig(partialsPerSecond: 0.1), logger: Logger(label: "test")) } == .invalidConfig)
    }
}
