import ProviderInterface

/// One provider instance's place in a conversation. A provider numbers its turns and speakers from
/// zero in every instance, so a resumed session (a new instance of the same provider) must not
/// collide with the earlier one: its turn ids and speaker keys carry the instance's token, and its
/// times are shifted to where the instance's first sample lies on the conversation timeline.
///
/// The strings below are what is stored (turn ids in `turns.id`, registry keys in
/// `speaker_keys`); they are built from typed parts and never parsed back.
struct ProviderInstanceScope: Sendable, Hashable {
    let provider: String
    /// The session token for a live instance ("3f2a9c1d"), or a fixed name ("rediarized").
    let instance: String
    /// Where the instance's first sample lies on the conversation timeline.
    let offsetSeconds: Double

    /// The stored id of one of the instance's turns: `provider:instance:turnID`.
    func turnID(_ turn: UInt64) -> String { "\(provider):\(instance):\(turn)" }

    /// The key a speaker of this instance has in the conversation's `SpeakerRegistry` (which
    /// prefixes the provider itself): `instance:speaker`.
    func speakerKey(_ speaker: Int32) -> String { "\(instance):\(speaker)" }

    /// The registry's full key (`provider/instance:speaker`), as persisted in `PersistStep.keyLabels`.
    func registryKey(_ speaker: Int32) -> String { "\(provider)/\(speakerKey(speaker))" }
}
