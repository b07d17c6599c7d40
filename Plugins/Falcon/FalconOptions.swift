import Foundation

/// A `falcon` session's options: how the live sliding window runs. Strict like every provider's: an
/// unknown key or a value out of range fails the start with a message naming it. A speaker count is
/// refused rather than ignored (Falcon takes none), and so is an AccessKey (server configuration only).
///
///     {"window_seconds": 30, "step_seconds": 5, "live": 1}
struct FalconOptions: Sendable, Equatable {
    /// Audio re-diarized at each step: the latest this many seconds.
    var windowSeconds = 30.0
    /// A window runs after each this many seconds of new audio.
    var stepSeconds = 5.0
    /// false: no live turns; only the pass over the whole session at finalize.
    var isLive = true

    static let ranges: [String: ClosedRange<Double>] = ["window_seconds": 5 ... 120, "step_seconds": 1 ... 60, "live": 0 ... 1]

    init() {}

    init(json: String?) throws(FalconOptionsError) {
        guard let json, !json.trimmingCharacters(in: .whitespaces).isEmpty else { return }
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            throw FalconOptionsError("options must be a JSON object")
        }
        for key in object.keys.sorted() {
            switch key {
            case "access_key", "accesskey", "picovoice_access_key":
                throw FalconOptionsError("the Picovoice AccessKey is server configuration (PICOVOICE_ACCESS_KEY or the provider config file), never a session option")
            case "num_speakers", "min_speakers", "max_speakers":
                throw FalconOptionsError("\(key): Falcon takes no speaker count; it finds the speakers itself")
            default:
                guard let range = Self.ranges[key] else {
                    throw FalconOptionsError("unknown option '\(key)' (known: \(Self.ranges.keys.sorted().joined(separator: ", ")))")
                }
                // JSON true/false arrive as NSNumber 1/0 and are taken as such (as DiarizerOptions does).
                guard let number = (object[key] as? NSNumber)?.doubleValue, range.contains(number) else {
                    throw FalconOptionsError("\(key) must be a number in \(range.lowerBound)...\(range.upperBound)")
                }
                switch key {
                case "window_seconds": windowSeconds = number
                case "step_seconds": stepSeconds = number
                default: isLive = number != 0
                }
            }
        }
        guard stepSeconds <= windowSeconds else {
            throw FalconOptionsError("step_seconds (\(stepSeconds)) is above window_seconds (\(windowSeconds))")
        }
    }
}

struct FalconOptionsError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}
