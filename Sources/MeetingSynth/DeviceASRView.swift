import Foundation
import DeterministicRandom

/// How the "device ASR" view groups the true words into recogniser results.
public struct DeviceASRConfig: Sendable, Equatable {
    /// Words per result.
    public var wordsPerResult: ClosedRange<Int>
    /// A silence longer than this always ends a result (recognisers finalise at pauses).
    public var maxGapSeconds: Double
    /// Probability that a result of two or more words is first sent volatile, without its last word.
    public var volatileProbability: Double
    /// Delay after the last included word's end before a volatile / final result is sent.
    public var volatileLatencySeconds: Double
    public var finalLatencySeconds: Double
    /// Per-word confidence ranges.
    public var volatileConfidence: ClosedRange<Double>
    public var finalConfidence: ClosedRange<Double>

    public init(wordsPerResult: ClosedRange<Int> = 2 ... 6, maxGapSeconds: Double = 0.5,
                volatileProbability: Double = 0.5, volatileLatencySeconds: Double = 0.2,
                finalLatencySeconds: Double = 0.6, volatileConfidence: ClosedRange<Double> = 0.4 ... 0.7,
                finalConfidence: ClosedRange<Double> = 0.8 ... 0.99) {
        self.wordsPerResult = wordsPerResult
        self.maxGapSeconds = maxGapSeconds
        self.volatileProbability = volatileProbability
        self.volatileLatencySeconds = volatileLatencySeconds
        self.finalLatencySeconds = finalLatencySeconds
        self.volatileConfidence = volatileConfidence
        self.finalConfidence = finalConfidence
    }

    public static let `default` = DeviceASRConfig()
}

/// One `words` message exactly as a device sends it on the wire (`type` is always "words").
public struct DeviceWordsMessage: Sendable, Hashable, Codable {
    public struct Word: Sendable, Hashable, Codable {
        public var text: String
        public var start: Double
        public var end: Double
        public var confidence: Double?

        public init(text: String, start: Double, end: Double, confidence: Double? = nil) {
            self.text = text
            self.start = start
            self.end = end
            self.confidence = confidence
        }
    }

    public var type: String = "words"
    public var resultID: String
    public var isFinal: Bool
    public var words: [Word]

    public init(resultID: String, isFinal: Bool, words: [Word]) {
        self.resultID = resultID
        self.isFinal = isFinal
        self.words = words
    }

    enum CodingKeys: String, CodingKey {
        case type
        case resultID = "result_id"
        case isFinal = "final"
        case words
    }
}

/// A message plus the audio time at which a real device would have it ready. The replay file is a JSON
/// array of `{"available_at": seconds, "message": {…wire message…}}` in sending order.
public struct DeviceASRResult: Sendable, Hashable, Codable {
    public var availableAtSeconds: Double
    public var message: DeviceWordsMessage

    public init(availableAtSeconds: Double, message: DeviceWordsMessage) {
        self.availableAtSeconds = availableAtSeconds
        self.message = message
    }

    enum CodingKeys: String, CodingKey {
        case availableAtSeconds = "available_at"
        case message
    }

    public static func encodeReplay(_ results: [DeviceASRResult]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(results)
    }

    public static func decodeReplay(_ data: Data) throws -> [DeviceASRResult] {
        do {
            return try JSONDecoder().decode([DeviceASRResult].self, from: data)
        } catch {
            throw SynthError(.invalidFile, "device replay JSON: \(error)")
        }
    }
}

extension SynthesizedMeeting {
    /// The words as an on-device recogniser would report them: grouped into results (`r1`, `r2`, …) of a
    /// few words, some first sent volatile without their last word and then replaced by the final
    /// version under the same result id, the way SpeechAnalyzer revises. No speaker labels. Seeded by
    /// the meeting seed, so it is reproducible too.
    public func deviceResults(config: DeviceASRConfig = .default) -> [DeviceASRResult] {
        var rng = SeededRandom.derived(from: seed, purpose: 4)
        let ordered = wordsByStart
        var results: [DeviceASRResult] = []
        var index = 0
        var resultNumber = 0
        while index < ordered.count {
            let target = rng.integer(config.wordsPerResult)
            var end = index + 1
            while end < ordered.count, end - index < target,
                  ordered[end].startSeconds - ordered[end - 1].endSeconds <= config.maxGapSeconds {
                end += 1
            }
            resultNumber += 1
            let group = ordered[index ..< end]
            let resultID = "r\(resultNumber)"
            let sendVolatile = rng.unit() < config.volatileProbability
            let volatileConfidences = group.map { _ in rng.uniform(config.volatileConfidence) }
            let finalConfidences = group.map { _ in rng.uniform(config.finalConfidence) }
            if sendVolatile, group.count >= 2 {
                let partial = group.dropLast()
                let words = zip(partial, volatileConfidences).map {
                    DeviceWordsMessage.Word(text: $0.text, start: $0.startSeconds, end: $0.endSeconds,
                                            confidence: Self.rounded($1))
                }
                results.append(DeviceASRResult(
                    availableAtSeconds: partial.last!.endSeconds + config.volatileLatencySeconds,
                    message: DeviceWordsMessage(resultID: resultID, isFinal: false, words: words)))
            }
            let words = zip(group, finalConfidences).map {
                DeviceWordsMessage.Word(text: $0.text, start: $0.startSeconds, end: $0.endSeconds,
                                        confidence: Self.rounded($1))
            }
            results.append(DeviceASRResult(
                availableAtSeconds: group.last!.endSeconds + config.finalLatencySeconds,
                message: DeviceWordsMessage(resultID: resultID, isFinal: true, words: words)))
            index = end
        }
        // Sending order: by availability; stable, so a volatile precedes its own final.
        return results.enumerated()
            .sorted { ($0.element.availableAtSeconds, $0.offset) < ($1.element.availableAtSeconds, $1.offset) }
            .map(\.element)
    }

    static func rounded(_ confidence: Double) -> Double { (confidence * 1000).rounded() / 1000 }
}
