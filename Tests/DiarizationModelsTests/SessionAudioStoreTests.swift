import Foundation
import Testing
@testable import DiarizationModels

/// The session audio kept for a pass at finalize: in memory up to the limit, then in a temporary file
/// that no directory lists (unlinked when made), with the same samples either way.
@Suite struct SessionAudioStoreTests {
    /// A private folder, so "no file is left" is checked where the store writes and nowhere else.
    static func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("audio-store-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func ramp(_ range: Range<Int>) -> [Float] { range.map { Float($0) * 0.001 } }

    @Test func staysInMemoryUpToTheLimit() throws {
        let store = SessionAudioStore(memoryLimitBytes: 4000 * 4, directory: try Self.folder().path)
        Self.ramp(0 ..< 4000).withUnsafeBufferPointer { try? store.append($0) }
        #expect(store.sampleCount == 4000)
        #expect(!store.isSpilled)
        #expect(try store.samples(in: 3990 ..< 4010) == Self.ramp(3990 ..< 4000))
    }

    @Test func spillsPastTheLimitKeepsEverySampleAndLeavesNoFile() throws {
        let directory = try Self.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = SessionAudioStore(memoryLimitBytes: 10_000 * 4, directory: directory.path)
        // Chunks of 1 600 (a 100 ms chunk at 16 kHz): the seventh crosses 10 000 samples.
        for start in stride(from: 0, to: 32_000, by: 1600) {
            try Self.ramp(start ..< start + 1600).withUnsafeBufferPointer { try store.append($0) }
            #expect(store.isSpilled == (start + 1600 > 10_000))
        }
        #expect(store.sampleCount == 32_000)
        // Nothing in the folder: the file was unlinked as soon as it was made.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        let all = try store.withSamples { Array($0) }
        #expect(all == Self.ramp(0 ..< 32_000))
        #expect(try store.samples(in: 9_990 ..< 10_010) == Self.ramp(9_990 ..< 10_010))
        #expect(try store.samples(in: -5 ..< 3) == Self.ramp(0 ..< 3))
        #expect(try store.samples(in: 31_999 ..< 40_000) == Self.ramp(31_999 ..< 32_000))
        #expect(try store.samples(in: 40_000 ..< 50_000).isEmpty)
        // Appending after a read keeps going in the file.
        try Self.ramp(32_000 ..< 32_100).withUnsafeBufferPointer { try store.append($0) }
        #expect(try store.samples(in: 31_990 ..< 32_100) == Self.ramp(31_990 ..< 32_100))
    }

    @Test func anUnwritableFolderIsAnErrorNotACrash() throws {
        let store = SessionAudioStore(memoryLimitBytes: 16, directory: "/nonexistent/speakersync")
        let samples = Self.ramp(0 ..< 100)
        #expect(throws: SessionAudioStoreError.self) {
            try samples.withUnsafeBufferPointer { try store.append($0) }
        }
        #expect(store.sampleCount == 0)
    }
}
