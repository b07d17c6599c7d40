import ArgumentParser
import DeterministicRandom
import Foundation
import SessionProtocol

/// What the server spends writing transcript updates: a session's final transcript re-sends every
/// word, and in the 500-session benchmark 500 of them go out within a second.
struct EncodeBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encode", abstract: "Encoding transcript updates: CPU per word of a final transcript (ServerMessageEncoder).")

    @Option(help: "Words in the transcript (the sessions bench's 32.3 s meeting has 53).") var words = 53
    @Option(help: "Encodings timed (after 100 untimed).") var repetitions = 20_000
    @Option(help: "Seed of the synthetic words.") var seed: UInt64 = 1

    func run() {
        var random = SeededRandom(seed: seed)
        let vocabulary = ["the", "meeting", "budget", "we", "should", "ship", "it", "on", "Tuesday", "okay", "café", "agreed"]
        var utterances: [WireUtterance] = []
        var seconds = 0.0
        var index = 0
        while index < words {
            let count = min(words - index, random.integer(3 ... 12))
            let speaker = "Speaker \(random.integer(1 ... 3))"
            let utteranceStart = seconds
            var wireWords: [WireWord] = []
            for _ in 0 ..< count {
                let start = seconds + random.uniform(0.02 ... 0.15)
                let end = start + random.uniform(0.15 ... 0.6)
                seconds = end
                wireWords.append(WireWord(text: vocabulary[random.index(vocabulary.count)], startSeconds: start, endSeconds: end,
                                          speaker: speaker, speakerConfidence: random.unit(), confidence: random.unit(),
                                          isFinal: true, isStored: true))
            }
            utterances.append(WireUtterance(id: "u\(utterances.count)", speaker: speaker, name: nil, startSeconds: utteranceStart,
                                            endSeconds: seconds, text: wireWords.map(\.text).joined(separator: " "), words: wireWords))
            index += count
        }
        let message = ServerMessage.transcript(TranscriptUpdate(revision: 42, upserted: utterances, removed: [], isFinal: true))
        let encoder = ServerMessageEncoder()
        let messageBytes = encoder.encode(message).utf8.count
        // Every result is read (summed), so no encoding can be optimised away.
        var totalBytes = 0
        for _ in 0 ..< 100 { totalBytes &+= encoder.encode(message).utf8.count }
        let began = ContinuousClock.now
        for _ in 0 ..< repetitions { totalBytes &+= encoder.encode(message).utf8.count }
        let elapsedSeconds = (ContinuousClock.now - began) / .seconds(1)
        let perMessage = elapsedSeconds / Double(repetitions)
        precondition(totalBytes == messageBytes &* (repetitions + 100), "the encoder's output changed between runs")
        print(String(format: "final transcript of %d words in %d utterances (%d bytes): %.1f µs per message, %.3f µs per word, %.0f MB/s",
                     words, utterances.count, messageBytes, perMessage * 1e6, perMessage * 1e6 / Double(words),
                     Double(messageBytes) / perMessage / 1e6))
    }
}
