import Foundation
import SessionProtocol

/// What the console's "Run test recording" asks for: a synthetic meeting with exact truth, made on
/// the server, or a recording someone uploaded (`upload`), streamed through each of `providers` in
/// turn as a device would stream it.
struct TestRecordingRequest: Sendable, Equatable {
    var providers: [String]
    /// The synthetic meeting's speakers, turns and seed (unused for an upload).
    var speakerCount: Int
    var turnCount: Int
    /// The meeting's seed: the same seed gives the same voices, words and timing, so providers can be
    /// compared on one meeting now and again later.
    var seed: UInt64
    /// Multiple of real time the audio is sent at (1: as a phone would; label latencies mean most).
    var speed: Double
    /// The device the sessions run as: a device token's own; the admin's choice, else `defaultDeviceID`.
    var deviceID: String
    /// What was uploaded, when the recording is a file rather than a synthetic meeting. Only its
    /// description: the audio itself travels beside the request (`UploadedRecording`), never into the
    /// recording's row.
    var upload: UploadDescription? = nil

    static let defaultDeviceID = "console"
    static let speakerRange = 2 ... 4
    static let turnRange = 2 ... 40
    static let speedRange = 0.5 ... 8.0
    static let maxProviders = 5

    /// Reads `{"providers":[…]` (or `"provider"`), `"speakers"`, `"turns"`, `"seed"`, `"speed"`,
    /// `"device_id"}`; every field is optional. A device token's request runs as its device.
    static func parse(_ body: [UInt8], principal: Principal, knownProviders: Set<String>, defaultProvider: String?,
                      randomSeed: () -> UInt64) throws(APIError) -> TestRecordingRequest {
        var object: [String: JSONValue] = [:]
        if !body.isEmpty {
            // The protocol's strict parser: Foundation's would read `"speakers": true` as 1.
            guard case .object(let dictionary)? = try? JSONParser().parse(bytes: body) else {
                throw invalid("the body must be a JSON object")
            }
            object = dictionary
        }
        var request = try common(object, principal: principal, knownProviders: knownProviders, defaultProvider: defaultProvider)
        request.speakerCount = try integer(object["speakers"], "speakers", default: 2, in: speakerRange)
        request.turnCount = try integer(object["turns"], "turns", default: 10, in: turnRange)
        switch object["seed"] {
        case nil: request.seed = randomSeed()
        case .number(let value)? where value >= 0 && value < 9e15 && value.rounded() == value: request.seed = UInt64(value)
        default: throw invalid("seed must be a whole number from 0 to 9e15")
        }
        return request
    }

    /// The fields every test recording has, synthetic or uploaded: `providers` (or `provider`),
    /// `speed` and `device_id`; the synthetic meeting's fields get their defaults.
    static func common(_ object: [String: JSONValue], principal: Principal, knownProviders: Set<String>,
                       defaultProvider: String?) throws(APIError) -> TestRecordingRequest {
        var providers: [String]
        switch (object["providers"], object["provider"]) {
        case (.array(let list)?, _):
            providers = try list.map { value throws(APIError) -> String in
                guard case .string(let name) = value else { throw invalid("providers must be an array of provider ids") }
                return name
            }
            guard !providers.isEmpty else { throw invalid("providers must not be empty") }
        case (.some, _): throw invalid("providers must be an array of provider ids")
        case (nil, .string(let name)?): providers = [name]
        case (nil, .some): throw invalid("provider must be a string")
        case (nil, nil):
            guard let defaultProvider else { throw invalid("name a provider: this server has no default") }
            providers = [defaultProvider]
        }
        var seen = Set<String>()
        providers = providers.filter { seen.insert($0).inserted }
        guard providers.count <= maxProviders else { throw invalid("at most \(maxProviders) providers per test recording") }
        for provider in providers where !knownProviders.contains(provider) {
            throw APIError(status: 400, code: "unknown_provider",
                           message: "provider '\(provider)' is not available; available: \(knownProviders.sorted().joined(separator: ", "))")
        }
        var speed = 1.0
        switch object["speed"] {
        case nil: break
        case .number(let value)? where speedRange.contains(value): speed = value
        default: throw invalid("speed must be a number from \(speedRange.lowerBound) to \(speedRange.upperBound)")
        }
        var device = defaultDeviceID
        switch object["device_id"] {
        case nil: break
        case .string(let name)? where !name.isEmpty && name.count <= 128: device = name
        default: throw invalid("device_id must be a non-empty string of at most 128 characters")
        }
        if let own = principal.deviceID {
            if object["device_id"] != nil, device != own {
                throw APIError(status: 403, code: "device_mismatch", message: "this token acts only as device '\(own)'")
            }
            device = own
        }
        return TestRecordingRequest(providers: providers, speakerCount: 2, turnCount: 10, seed: 0, speed: speed, deviceID: device)
    }

    private static func integer(_ value: JSONValue?, _ key: String, default fallback: Int, in range: ClosedRange<Int>) throws(APIError) -> Int {
        guard let value else { return fallback }
        guard case .number(let number) = value, number.rounded() == number, number >= Double(range.lowerBound),
              number <= Double(range.upperBound) else {
            throw invalid("\(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return Int(number)
    }

    static func invalid(_ message: String) -> APIError {
        APIError(status: 400, code: "invalid_parameter", message: message)
    }

    var jsonObject: [String: Any] {
        let common: [String: Any] = ["providers": providers, "speed": speed, "device_id": deviceID]
        guard let upload else {
            return common.merging(["source": "synthetic", "speakers": speakerCount, "turns": turnCount, "seed": seed]) { a, _ in a }
        }
        return common.merging(upload.jsonObject) { a, _ in a }
    }
}
