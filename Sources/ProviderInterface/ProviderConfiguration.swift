import Foundation

/// The operator's configuration of providers: for each provider id, a JSON object its plugin reads
/// through the host's `provider_config` (ABI 1 revision 4). Model paths and secrets live here (or in
/// environment variables the plugins read), never in a session's options.
///
/// The file `speakersync serve --provider-config FILE` names is one JSON object keyed by provider id:
///
///     {"sherpa-onnx": {"segmentation_model": "/models/segmentation.onnx",
///                      "embedding_models": {"eres2net": "/models/eres2net.onnx"}},
///      "falcon": {"access_key": "…"}}
public struct ProviderConfiguration: Sendable, Equatable {
    /// Provider id → its section as canonical JSON text.
    public var sections: [String: String]

    public init(sections: [String: String] = [:]) {
        self.sections = sections
    }

    public static let empty = ProviderConfiguration()

    /// Reads a provider config file. Throws `ProviderConfigurationError` naming the problem (the
    /// message never quotes the file's values: they may be secrets).
    public static func load(path: String) throws(ProviderConfigurationError) -> ProviderConfiguration {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ProviderConfigurationError("cannot read the provider config file \(path): \(error.localizedDescription)")
        }
        return try parse(data, source: path)
    }

    /// Secrets a provider may be given in the server's environment instead of its section: (provider
    /// id, setting, variable). The server moves them into the section, so they reach the provider's own
    /// worker through its configuration and no process through its environment.
    public static let environmentSecrets: [(providerID: String, setting: String, variable: String)] = [
        ("falcon", "access_key", "PICOVOICE_ACCESS_KEY"),
    ]

    /// This configuration with each `environmentSecrets` variable set in `environment` (and not empty)
    /// written into its provider's section, unless the section already has the setting (the file wins).
    public func fillingSecrets(from environment: [String: String]) -> ProviderConfiguration {
        var filled = self
        for secret in Self.environmentSecrets {
            guard let value = environment[secret.variable]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { continue }
            var object: [String: Any] = [:]
            if let section = sections[secret.providerID],
               let parsed = try? JSONSerialization.jsonObject(with: Data(section.utf8)) as? [String: Any] {
                object = parsed
            }
            guard object[secret.setting] == nil else { continue }
            object[secret.setting] = value
            guard let text = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { continue }
            filled.sections[secret.providerID] = String(decoding: text, as: UTF8.self)
        }
        return filled
    }

    /// Parses the file's content; `source` names it in errors.
    public static func parse(_ data: Data, source: String) throws(ProviderConfigurationError) -> ProviderConfiguration {
        guard let object = try? JSONSerialization.jsonObject(with: data), let providers = object as? [String: Any] else {
            throw ProviderConfigurationError("\(source) is not a JSON object keyed by provider id")
        }
        var sections: [String: String] = [:]
        for (id, section) in providers {
            guard let section = section as? [String: Any],
                  let text = try? JSONSerialization.data(withJSONObject: section, options: [.sortedKeys, .withoutEscapingSlashes]) else {
                throw ProviderConfigurationError("\(source): the value for provider '\(id)' must be a JSON object")
            }
            sections[id] = String(decoding: text, as: UTF8.self)
        }
        return ProviderConfiguration(sections: sections)
    }
}

public struct ProviderConfigurationError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
