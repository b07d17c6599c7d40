/// Two speakers whose profiles are close enough to be one person (`findMergeablePairs`), with the
/// direction a merge should take: a permanent speaker is always the destination when one of them is.
public struct MergeablePair: Hashable, Sendable, Codable {
    public var speakerToMerge: String
    public var destination: String
    public var distance: Float

    public init(speakerToMerge: String, destination: String, distance: Float) {
        self.speakerToMerge = speakerToMerge
        self.destination = destination
        self.distance = distance
    }
}
