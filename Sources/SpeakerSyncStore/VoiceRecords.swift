import Foundation

/// An enrolled person: a name and a voice embedding in one provider's space.
public struct PersonRecord: Sendable, Equatable {
    public var personID: String
    public var deviceID: String
    public var name: String
    public var provider: String
    public var embedding: [Float]
    public var speechSeconds: Double
    public var source: String

    public init(personID: String, deviceID: String, name: String, provider: String, embedding: [Float], speechSeconds: Double, source: String) {
        self.personID = personID
        self.deviceID = deviceID
        self.name = name
        self.provider = provider
        self.embedding = embedding
        self.speechSeconds = speechSeconds
        self.source = source
    }
}

/// A conversation speaker's voice profile, kept so a reconnect recognises them.
public struct SpeakerProfileRecord: Sendable, Equatable {
    public var label: String
    public var embedding: [Float]
    public var speechSeconds: Double

    public init(label: String, embedding: [Float], speechSeconds: Double) {
        self.label = label
        self.embedding = embedding
        self.speechSeconds = speechSeconds
    }
}
