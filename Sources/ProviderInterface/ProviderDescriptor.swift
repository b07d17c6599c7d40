/// How soon a provider's turns follow the audio (mirrors `speakersync_latency_class_t`).
public enum LatencyClass: String, Sendable, Hashable, Codable, CaseIterable {
    /// Turns trail the audio by well under a second.
    case realtime
    /// Turns trail by a few seconds; revisions are common.
    case nearRealtime = "near_realtime"
    /// Turns come only (or mostly) after finalize.
    case offline
}

/// Where a provider comes from.
public enum ProviderKind: Sendable, Hashable {
    /// Implemented by the server itself (`none`, `device`); has no plugin instance.
    case builtin
    /// Offered by the plugin library at this path.
    case plugin(path: String)
}

/// One diarization provider a session can choose, as listed by `GET /v1/providers`.
public struct ProviderDescriptor: Sendable, Hashable {
    public var id: String
    public var name: String
    public var version: String
    public var description: String
    public var latencyClass: LatencyClass
    public var licence: String
    public var kind: ProviderKind
    /// What it needs to run (models, keys, network); "" for nothing (ABI 1 revision 4).
    public var requirements: String
    /// Its measured accuracy and speed, or "not measurable here: why"; "" when unknown (revision 4).
    public var measured: String
    /// Why it cannot serve sessions, when it cannot (the plugin's `availability`, revision 4): it is
    /// listed, but sessions asking for it get `provider_unavailable`.
    public var unavailableReason: String?

    public init(
        id: String, name: String, version: String, description: String, latencyClass: LatencyClass,
        licence: String, kind: ProviderKind, requirements: String = "", measured: String = "", unavailableReason: String? = nil
    ) {
        self.id = id
        self.name = name
        self.version = version
        self.description = description
        self.latencyClass = latencyClass
        self.licence = licence
        self.kind = kind
        self.requirements = requirements
        self.measured = measured
        self.unavailableReason = unavailableReason
    }

    /// Id of the built-in provider that labels no words.
    public static let noneID = "none"
    /// Id of the built-in provider whose turns come from the device (`segments` messages).
    public static let deviceID = "device"

    /// `none`: the session's words are not labelled with speakers.
    public static let none = ProviderDescriptor(
        id: noneID, name: "No diarization", version: "1.0.0",
        description: "Words are not labelled with speakers.",
        latencyClass: .realtime, licence: "same as SpeakerSync", kind: .builtin)

    /// `device`: the device computes speaker turns itself and sends them as `segments` messages.
    public static let device = ProviderDescriptor(
        id: deviceID, name: "Device turns", version: "1.0.0",
        description: "The device sends its own speaker turns (segments messages), e.g. from an on-device diarizer.",
        latencyClass: .realtime, licence: "same as SpeakerSync", kind: .builtin)

    /// The built-in providers, always listed first.
    public static let builtins: [ProviderDescriptor] = [none, device]
}

extension ProviderDescriptor: Encodable {
    private enum CodingKeys: String, CodingKey {
        case id, name, version, description, licence, kind, path, requirements, measured
        case latencyClass = "latency_class"
        case unavailableReason = "unavailable_reason"
    }

    /// Snake-case JSON for the HTTP API: `kind` is "builtin" or "plugin", `path` only for plugins.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(version, forKey: .version)
        try c.encode(description, forKey: .description)
        try c.encode(latencyClass, forKey: .latencyClass)
        try c.encode(licence, forKey: .licence)
        switch kind {
        case .builtin:
            try c.encode("builtin", forKey: .kind)
        case .plugin(let path):
            try c.encode("plugin", forKey: .kind)
            try c.encode(path, forKey: .path)
        }
        try c.encode(requirements, forKey: .requirements)
        try c.encode(measured, forKey: .measured)
        try c.encodeIfPresent(unavailableReason, forKey: .unavailableReason)
    }
}
