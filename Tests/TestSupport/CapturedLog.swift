import Logging
import Synchronization

/// Collects log lines in memory so tests can assert what the registry told operators.
public final class CapturedLog: Sendable {
    public struct Line: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]
    }

    private let storage = Mutex<[Line]>([])

    public init() {}

    public var lines: [Line] { storage.withLock { $0 } }

    public func logger(level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: "plugin-host-test") { _ in Handler(log: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func append(_ line: Line) { storage.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            log.append(Line(level: event.level, message: event.message.description, metadata: merged.mapValues { "\($0)" }))
        }
    }
}
