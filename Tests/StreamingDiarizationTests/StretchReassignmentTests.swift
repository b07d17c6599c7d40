import Testing
@testable import StreamingDiarization

/// Stretches between pauses move to the cluster whose centre, computed without them, is nearest.
@Suite struct StretchReassignmentTests {
    /// Unit vectors near `centre`: a fixed direction plus a small per-frame wobble.
    func voice(_ centre: [Float], frames: Int, wobble: Float, seed: Int) -> [[Float]] {
        (0 ..< frames).map { n in
            var v = centre
            v[(n + seed) % v.count] += wobble
            v[(3 * n + seed + 1) % v.count] -= wobble
            let norm = v.reduce(0) { $0 + $1 * $1 }.squareRoot()
            return v.map { $0 / norm }
        }
    }

    // Two similar voices (cosine 0.8) in 8 dimensions, and a third far from both.
    let a: [Float] = [1, 0, 0, 0, 0, 0, 0, 0]
    let b: [Float] = [0.8, 0.6, 0, 0, 0, 0, 0, 0]
    let c: [Float] = [0, 0, 0, 0, 1, 0, 0, 0]

    /// Mean cosine similarity of `frames` to the normalised sum of `members`.
    func similarity(_ frames: [[Float]], toCentreOf members: [[Float]]) -> Float {
        var centre = [Float](repeating: 0, count: frames[0].count)
        for v in members { for i in centre.indices { centre[i] += v[i] } }
        let norm = centre.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return frames.map { v in zip(v, centre).reduce(0) { $0 + $1.0 * $1.1 } / norm }.reduce(0, +) / Float(frames.count)
    }

    @Test func aTurnFiledWithTheSimilarVoiceMovesToItsOwn() {
        // A voice between A and B, nearer B, filed with A: counted in A's centre it pulls that
        // centre its way and looks like A; against A's centre without it, B's is nearer.
        let between: [Float] = zip(a, b).map { 0.45 * $0 + 0.55 * $1 }
        let voiceA = voice(a, frames: 6, wobble: 0.05, seed: 0), voiceB = voice(b, frames: 4, wobble: 0.05, seed: 1)
        let misfiled = voice(between, frames: 6, wobble: 0.05, seed: 2), voiceC = voice(c, frames: 3, wobble: 0.05, seed: 3)
        #expect(similarity(misfiled, toCentreOf: voiceA + misfiled) > similarity(misfiled, toCentreOf: voiceB))
        #expect(similarity(misfiled, toCentreOf: voiceA) < similarity(misfiled, toCentreOf: voiceB))
        let embeddings = voiceA + voiceB + misfiled + voiceC
        let labels = Array(repeating: 0, count: 6) + Array(repeating: 1, count: 4) + Array(repeating: 0, count: 6) + Array(repeating: 2, count: 3)
        let stretches = [0 ..< 6, 6 ..< 10, 10 ..< 16, 16 ..< 19]
        let refined = StretchReassignment(minimumFrames: 2).refine(embeddings, labels: labels, stretches: stretches)
        #expect(Array(refined[10 ..< 16]) == Array(repeating: 1, count: 6))
        #expect(Array(refined[0 ..< 10]) == Array(labels[0 ..< 10]) && Array(refined[16...]) == Array(labels[16...]))
        // Off: nothing moves.
        #expect(StretchReassignment(minimumFrames: 0).refine(embeddings, labels: labels, stretches: stretches) == labels)
    }

    @Test func leavesShortMixedAndLastStretchesAlone() {
        let embeddings = voice(a, frames: 6, wobble: 0.05, seed: 0) + voice(b, frames: 4, wobble: 0.05, seed: 1)
            + voice(b, frames: 6, wobble: 0.05, seed: 2)
        let filedWithA = Array(repeating: 0, count: 6) + Array(repeating: 1, count: 4) + Array(repeating: 0, count: 6)
        // Too short: the B stretch cut into 1-frame pieces.
        let pieces = [0 ..< 6, 6 ..< 10] + (10 ..< 16).map { $0 ..< $0 + 1 }
        #expect(StretchReassignment(minimumFrames: 2).refine(embeddings, labels: filedWithA, stretches: pieces) == filedWithA)
        // Mixed: one stretch holding both labels has a change of speaker inside and is not moved whole.
        let mixed = [0 ..< 6, 6 ..< 16]
        #expect(StretchReassignment(minimumFrames: 2).refine(embeddings, labels: filedWithA, stretches: mixed) == filedWithA)
        // A cluster's only stretch stays, even if another centre is nearer: the count is the clustering's.
        let onlyB = Array(repeating: 0, count: 6) + Array(repeating: 1, count: 10)
        let sole = [0 ..< 6, 6 ..< 16]
        #expect(StretchReassignment(minimumFrames: 2).refine(embeddings, labels: onlyB, stretches: sole) == onlyB)
    }
}
