/// Many sessions' pushes with one encoder call: each diarizer takes its audio up to the encoder, every
/// window due across them is embedded together, then each diarizer labels its own frames.
///
/// Why: at real-time pace a session has one or two windows due per push, and GE2E's recurrent layers
/// then read all their weights for a batch of one or two: memory-bound, with the weights evicted by
/// other sessions between calls. One call for the windows of many sessions reads them once (the
/// dynamic batching of inference servers, on a CPU). Each diarizer sees exactly what it would alone,
/// so labels do not change (DiarizerBatchTests).
public enum DiarizerBatch {
    /// One push per item, in order; a diarizer that fails does not stop the others (its error is
    /// returned at its index; nil for success). The diarizers must be distinct.
    public static func push(_ items: [(diarizer: StreamingDiarizer, samples: [Float])], embedder: any SpeakerEmbedder) -> [(any Error)?] {
        var errors = [(any Error)?](repeating: nil, count: items.count)
        var rounds: [(item: Int, round: EmbeddingRound)] = []
        for (index, item) in items.enumerated() {
            do {
                if let round = try item.diarizer.pushDeferringEmbeddings(item.samples) { rounds.append((index, round)) }
            } catch {
                errors[index] = error
            }
        }
        guard !rounds.isEmpty else { return errors }
        let embeddings: [[Float]]
        do {
            embeddings = try embedder.embed(rounds.flatMap(\.round.windows))
        } catch {
            for (index, _) in rounds { errors[index] = DiarizerError(.embeddingFailed, "\(error)") }
            return errors
        }
        var offset = 0
        for (index, round) in rounds {
            let count = round.windows.count
            do {
                try items[index].diarizer.complete(round, embeddings: Array(embeddings[offset ..< min(embeddings.count, offset + count)]))
            } catch {
                errors[index] = error
            }
            offset += count
        }
        return errors
    }
}
