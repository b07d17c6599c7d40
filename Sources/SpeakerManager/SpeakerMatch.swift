/// A speaker and the cosine distance from a query embedding to its profile.
public struct SpeakerMatch: Hashable, Sendable, Codable {
    public var id: String
    public var distance: Float

    public init(id: String, distance: Float) {
        self.id = id
        self.distance = distance
    }
}
