import Foundation
import Testing

@testable import SpeakerSyncServer

/// The document stored in `labellings.stats`: what compare and the console read back.
@Suite struct LabellingStatsTests {
    @Test func theStoredDocumentHoldsEveryFigureWithSortedKeys() throws {
        let stats = LabellingStats(audioSeconds: 20, wordCount: 53, unlabelledWordCount: 2, speakerCount: 3, cpuSeconds: 0.5,
                                   chunkSeconds: [0.001, 0.003, 0.002, 0.010], labelLatenciesSeconds: [0.2, 0.1])
        let text = stats.json
        let object = try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(object["audio_seconds"] as? Double == 20)
        #expect(object["words"] as? Int == 53)
        #expect(object["unlabelled_words"] as? Int == 2)
        #expect(object["speakers"] as? Int == 3)
        #expect(object["real_time_factor"] as? Double == 0.025)
        let chunks = try #require(object["chunk_seconds"] as? [String: Any])
        #expect(chunks["count"] as? Int == 4)
        #expect(chunks["max"] as? Double == 0.010)
        #expect(chunks["p50"] as? Double == 0.002)
        let latency = try #require(object["label_latency_seconds"] as? [String: Any])
        #expect(latency["count"] as? Int == 2)
        #expect(latency["p99"] as? Double == 0.2)
        // Keys in sorted order, as JSONSerialization's .sortedKeys wrote them before.
        let keys = ["audio_seconds", "chunk_seconds", "label_latency_seconds", "real_time_factor", "speakers", "unlabelled_words", "words"]
        let offsets = keys.map { text.range(of: "\"\($0)\"")!.lowerBound }
        #expect(offsets == offsets.sorted())
    }

    @Test func withoutAudioThereIsNoRealTimeFactorAndSummariesAreEmpty() throws {
        let stats = LabellingStats(audioSeconds: 0, wordCount: 0, unlabelledWordCount: 0, speakerCount: 0, cpuSeconds: 0,
                                   chunkSeconds: [], labelLatenciesSeconds: [])
        let object = try #require(JSONSerialization.jsonObject(with: Data(stats.json.utf8)) as? [String: Any])
        #expect(object["real_time_factor"] == nil)
        #expect((object["chunk_seconds"] as? [String: Any])?.keys.sorted() == ["count"])
    }
}
