import Foundation
import Logging
import Synchronization

/// `serve --log-format json`: each record as one JSON object on one line of standard error, for log
/// shippers (Loki, Fluent Bit, CloudWatch) that parse JSON lines:
/// `{"label","level","message","metadata":{…},"source","timestamp"}` (keys sorted; `error` when the
/// record carries one). Metadata keeps its shape: strings, arrays and nested objects.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    private let sink: LineSink

    init(label: String, metadataProvider: Logger.MetadataProvider? = nil, sink: LineSink = .standardError) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.sink = sink
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        // The record's own metadata wins over the logger's, which wins over the provider's (swift-log's order).
        var merged = metadataProvider?.get() ?? [:]
        merged.merge(metadata) { $1 }
        merged.merge(event.metadata ?? [:]) { $1 }
        var object: [String: Any] = [
            "timestamp": Date().formatted(Self.timestampStyle), "level": event.level.rawValue, "label": label,
            "message": event.message.description, "source": event.source, "metadata": merged.mapValues(Self.json),
        ]
        if let error = event.error { object["error"] = String(describing: error) }
        sink.write(Self.line(object))
    }

    /// One line of JSON (no newline inside: JSONSerialization escapes those in strings).
    static func line(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else {
            return #"{"level":"error","message":"unencodable log record"}"#
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): values.map(json)
        case .dictionary(let values): values.mapValues(json)
        }
    }

    /// UTC with milliseconds, e.g. 2026-11-28T02:27:03.412Z: sortable, and what shippers parse.
    static let timestampStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// Where the lines go: one write per line under a lock, so lines from many threads never interleave.
    final class LineSink: Sendable {
        private let handle: Mutex<FileHandle>

        init(_ handle: FileHandle) { self.handle = Mutex(handle) }

        static let standardError = LineSink(.standardError)

        func write(_ line: String) {
            let data = Data((line + "\n").utf8)
            handle.withLock { $0.write(data) }
        }
    }
}
