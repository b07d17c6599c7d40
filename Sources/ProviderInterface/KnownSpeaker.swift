/// A speaker's voice profile in a provider's own embedding space.
public struct SpeakerProfile: Sendable, Equatable {
    public var embedding: [Float]
    public var durationSeconds: Double

    public init(embedding: [Float], durationSeconds: Double) {
        self.embedding = embedding
        self.durationSeconds = durationSeconds
    }
}

/// A speaker an instance should recognise from the start: an enrolled person (permanent) or a speaker
/// of the same conversation before a reconnect. `speaker` is the index the plugin will use in turns.
public struct KnownSpeaker: Sendable, Equatable {
    public var speaker: Int32
    public var profile: SpeakerProfile
    public var isPermanent: Bool
    public var name: String?

    public init(speaker: Int32, profile: SpeakerProfile, isPermanent: Bool, name: String? = nil) {
        self.speaker = speaker
        self.profile = profile
        self.isPermanent = isPermanent
        self.name = name
    }
}
