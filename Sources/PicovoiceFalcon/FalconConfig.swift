import Foundation
import VoiceActivity

/// Where Falcon is and the AccessKey it runs with: the `falcon` section of the server's provider config
/// file, else the environment, else the vendored copy scripts/setup makes.
///
///     {"falcon": {"access_key": "…", "library": "/opt/pv/libpv_falcon.so", "model": "/opt/pv/falcon_params.pv",
///                 "device": "cpu:1", "engines": 2}}
///
/// Environment: PICOVOICE_ACCESS_KEY, SPEAKERSYNC_FALCON_LIBRARY, SPEAKERSYNC_FALCON_MODEL. The key is a
/// secret: `description` never shows it, and no error quotes it.
public struct FalconConfig: Sendable, Equatable, CustomStringConvertible {
    public static let accessKeyVariable = "PICOVOICE_ACCESS_KEY"
    public static let libraryVariable = "SPEAKERSYNC_FALCON_LIBRARY"
    public static let modelVariable = "SPEAKERSYNC_FALCON_MODEL"
    static let vendorLibrarySubpath = "vendor/picovoice/lib"
    static let vendorModelSubpath = "vendor/picovoice/models"
    public static let libraryFileName = "libpv_falcon.so"
    public static let modelFileName = "falcon_params.pv"

    public var accessKey: String?
    public var libraryPath: String
    public var modelPath: String
    /// Picovoice's device string: "cpu:N" runs N threads per engine. One thread by default: many sessions
    /// share the machine, and Falcon runs each whole window at once.
    public var device: String
    /// Engines made at most (each one activation): sessions borrow one per window. Default: one per core.
    public var engines: Int

    public var description: String {
        "FalconConfig(accessKey: \(accessKey == nil ? "none" : "[redacted]"), library: \(libraryPath), model: \(modelPath), device: \(device), engines: \(engines))"
    }

    public static func parse(section: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws(FalconError) -> FalconConfig {
        var object: [String: Any] = [:]
        if let section {
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(section.utf8)) as? [String: Any] else {
                throw FalconError(.invalidConfig, "the provider config section for falcon is not a JSON object")
            }
            object = parsed
        }
        let known: Set<String> = ["access_key", "library", "model", "device", "engines"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw FalconError(.invalidConfig, "unknown setting '\(unknown)' in the falcon provider config; known: \(known.sorted().joined(separator: ", "))")
        }
        func text(_ key: String, _ variable: String?) throws(FalconError) -> String? {
            if let value = object[key] {
                // Never quote the value: it may be the key.
                guard let string = value as? String, !string.isEmpty else { throw FalconError(.invalidConfig, "falcon setting '\(key)' must be a non-empty string") }
                return string
            }
            return variable.flatMap { environment[$0] }.flatMap { $0.isEmpty ? nil : $0 }
        }
        let accessKey = try text("access_key", accessKeyVariable)?.trimmingCharacters(in: .whitespacesAndNewlines)
        let library = try text("library", libraryVariable)
            ?? (VendorLocation.locate(vendorLibrarySubpath, containing: libraryFileName) as NSString).appendingPathComponent(libraryFileName)
        let model = try text("model", modelVariable)
            ?? (VendorLocation.locate(vendorModelSubpath, containing: modelFileName) as NSString).appendingPathComponent(modelFileName)
        let device = try text("device", nil) ?? "cpu:1"
        var engines = max(1, ProcessInfo.processInfo.activeProcessorCount)
        if let value = object["engines"] {
            guard let count = value as? Int, (1 ... 64).contains(count) else { throw FalconError(.invalidConfig, "falcon setting 'engines' must be a whole number from 1 to 64") }
            engines = count
        }
        return FalconConfig(accessKey: accessKey.flatMap { $0.isEmpty ? nil : $0 }, libraryPath: library, modelPath: model, device: device, engines: engines)
    }
}
