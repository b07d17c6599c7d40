import ArgumentParser
import Logging

/// The values `--log-level` takes: swift-log's levels. An enum, so ArgumentParser refuses a misspelt
/// level ("verbose") with the list instead of the command quietly logging at info.
enum LogLevelOption: String, CaseIterable, ExpressibleByArgument, Sendable {
    case trace, debug, info, notice, warning, error, critical

    var level: Logger.Level { Logger.Level(rawValue: rawValue) ?? .info }

    static let help = "trace, debug, info, notice, warning, error or critical."
}

/// How `serve` writes its log: `text`, swift-log's lines for people, or `json`, one object per line
/// for log shippers (`JSONLogHandler`).
enum LogFormatOption: String, CaseIterable, ExpressibleByArgument, Sendable {
    case text, json
}
