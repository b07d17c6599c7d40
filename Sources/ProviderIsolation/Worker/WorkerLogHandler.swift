import Logging

/// The worker's logger (its own and its plugin's `host->log` lines): every record crosses to the server,
/// which logs it with the worker's pid and plugin, so an operator reads one log.
struct WorkerLogHandler: LogHandler {
    let outbox: WorkerOutbox
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        outbox.send(.log(level: Self.code(event.level), message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
    }

    static func code(_ level: Logger.Level) -> UInt8 {
        UInt8(Logger.Level.allCases.firstIndex(of: level) ?? 0)
    }

    static func level(_ code: UInt8) -> Logger.Level {
        let levels = Logger.Level.allCases
        return levels[min(Int(code), levels.count - 1)]
    }
}
