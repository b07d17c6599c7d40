import SpeakerManager

/// Live speaker identities across windows (diart's incremental clustering): each window's local
/// speakers are assigned to distinct global speakers, one to one, by the least total cosine distance
/// to the global centroids, where leaving a local speaker unmatched (a new speaker) costs
/// `newSpeakerDistance`. Centroids move with the embeddings of local speakers heard long enough alone;
/// enrolled people start as centroids of their own and keep their labels. Pure.
public struct OnlineSpeakerClustering: Sendable {
    public struct Centroid: Sendable {
        public var speaker: Int32
        /// Sum of unit embeddings, weighted by seconds (compared by direction only).
        public var sum: [Float]
        public var seconds: Double
        public var isKnown: Bool
    }

    /// One local speaker of a window, as the clustering sees it.
    public struct Local: Sendable {
        public var index: Int
        public var embedding: [Float]
        /// Seconds alone in the window (weight of a centroid update).
        public var cleanSeconds: Double

        public init(index: Int, embedding: [Float], cleanSeconds: Double) {
            self.index = index
            self.embedding = embedding
            self.cleanSeconds = cleanSeconds
        }
    }

    public private(set) var centroids: [Centroid] = []
    private var nextSpeaker: Int32

    public init(known: [(speaker: Int32, embedding: [Float], seconds: Double)] = []) {
        for voice in known {
            centroids.append(Centroid(speaker: voice.speaker, sum: Self.unit(voice.embedding).map { $0 * Float(max(voice.seconds, 1)) },
                                      seconds: max(voice.seconds, 1), isKnown: true))
        }
        nextSpeaker = (known.map(\.speaker).max() ?? -1) + 1
    }

    /// Global speaker per local index. `forbidden`: globals already used in this window by local
    /// speakers assigned otherwise (continuity), so the assignment stays one to one.
    public mutating func assign(_ locals: [Local], config: OverlapDiarizerConfig, forbidden: Set<Int32> = []) -> [Int: Int32] {
        guard !locals.isEmpty else { return [:] }
        let candidates = centroids.indices.filter { !forbidden.contains(centroids[$0].speaker) }
        let distances = locals.map { local in candidates.map { SpeakerUtilities.cosineDistance(local.embedding, centroids[$0].sum) } }
        // Exhaustive search: at most three local speakers per window, so (candidates + 1)³ choices.
        var best: (cost: Float, choice: [Int]) = (.infinity, [])
        var choice = [Int](repeating: -1, count: locals.count)
        func search(_ position: Int, _ cost: Float, _ used: Set<Int>) {
            if cost >= best.cost { return }
            if position == locals.count { best = (cost, choice); return }
            for (column, distance) in distances[position].enumerated() where !used.contains(column) {
                let limit = centroids[candidates[column]].isKnown ? config.enrolledDistance : config.newSpeakerDistance
                guard distance < limit else { continue }
                choice[position] = column
                search(position + 1, cost + distance, used.union([column]))
            }
            choice[position] = -1
            search(position + 1, cost + config.newSpeakerDistance, used)
        }
        search(0, 0, [])
        var result: [Int: Int32] = [:]
        for (position, local) in locals.enumerated() {
            let column = best.choice[position]
            if column >= 0 {
                let index = candidates[column]
                result[local.index] = centroids[index].speaker
                if local.cleanSeconds >= config.updateSeconds { update(index, with: local) }
            } else if centroids.count < config.maximumSpeakers {
                let speaker = nextSpeaker
                nextSpeaker += 1
                centroids.append(Centroid(speaker: speaker, sum: [Float](repeating: 0, count: local.embedding.count), seconds: 0, isKnown: false))
                update(centroids.count - 1, with: local)
                result[local.index] = speaker
            } else if let nearest = candidates.indices.filter({ !best.choice.contains($0) })
                .min(by: { distances[position][$0] < distances[position][$1] }) {
                // At the speaker limit: the nearest global speaker not taken in this window.
                result[local.index] = centroids[candidates[nearest]].speaker
            }
        }
        return result
    }

    /// The centroid of `speaker` as a unit vector, if known.
    public func embedding(of speaker: Int32) -> (embedding: [Float], seconds: Double)? {
        guard let centroid = centroids.first(where: { $0.speaker == speaker }), centroid.seconds > 0 else { return nil }
        return (Self.unit(centroid.sum), centroid.seconds)
    }

    private mutating func update(_ index: Int, with local: Local) {
        let weight = Float(max(local.cleanSeconds, 0.1))
        let unit = Self.unit(local.embedding)
        for i in centroids[index].sum.indices { centroids[index].sum[i] += weight * unit[i] }
        centroids[index].seconds += Double(weight)
    }

    static func unit(_ vector: [Float]) -> [Float] {
        let norm = vector.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
        return norm > 0 ? vector.map { $0 / norm } : vector
    }
}
