import Foundation
import Synchronization

/// The server's counters, gauges and histograms, rendered in Prometheus' text exposition format
/// (version 0.0.4) by `GET /metrics`. Hand-written: no metrics package is available offline here,
/// and the format is small. Label values are provider ids, close codes, route names and statuses,
/// never device or conversation ids (bounded cardinality; nothing a scraper should not see).
public final class ServerMetrics: Sendable {
    /// Upper bounds (seconds) of the latency histograms: 5 ms to 30 s.
    public static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
    /// Upper bounds of the real-time-factor histogram.
    public static let factorBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]
    /// Upper bounds (seconds) of the store commit histogram: 0.5 ms to 10 s (a small commit on a local
    /// PostgreSQL takes about a millisecond, under the 5 ms the latency buckets start at).
    public static let commitBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10]

    struct Series: Hashable, Comparable {
        var name: String
        var labels: [String: String]

        static func < (a: Series, b: Series) -> Bool { (a.name, a.labelText) < (b.name, b.labelText) }

        var labelText: String {
            guard !labels.isEmpty else { return "" }
            return "{" + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(Self.escape($0.value))\"" }.joined(separator: ",") + "}"
        }

        static func escape(_ value: String) -> String {
            value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
        }
    }

    struct Histogram {
        var bounds: [Double]
        var counts: [UInt64]
        var sum = 0.0
        var count: UInt64 = 0

        init(bounds: [Double]) {
            self.bounds = bounds
            counts = Array(repeating: 0, count: bounds.count)
        }

        mutating func observe(_ values: some Sequence<Double>) {
            for value in values {
                for index in bounds.indices where value <= bounds[index] { counts[index] += 1 }
                sum += value
                count += 1
            }
        }
    }

    private struct State {
        var counters: [Series: Double] = [:]
        var gauges: [Series: Double] = [:]
        var histograms: [Series: Histogram] = [:]
    }

    private let state = Mutex(State())
    /// Gauges read when the page is rendered (a queue's depth), rather than kept up to date.
    private let samplers = Mutex<[Series: @Sendable () -> Double]>([:])
    private let help: [String: (type: String, text: String)] = [
        "speakersync_sessions_started_total": ("counter", "Sessions started (or resumed), by provider."),
        "speakersync_sessions_ended_total": ("counter", "Sessions ended, by provider and the close code the server sent (peer: the device closed or vanished)."),
        "speakersync_sessions_active": ("gauge", "Sessions running now, by provider."),
        "speakersync_words_received_total": ("counter", "Words received in words messages (volatile and final versions each count)."),
        "speakersync_words_stored_total": ("counter", "Word rows committed to PostgreSQL (inserts and updates)."),
        "speakersync_store_failures_total": ("counter", "Store steps that failed (the session goes on with stored:false)."),
        "speakersync_provider_failures_total": ("counter", "Provider failures that ended a session, by provider and code."),
        "speakersync_shadow_failures_total": ("counter", "Shadow provider failures (the shadow stopped, its session went on), by provider and code."),
        "speakersync_provider_chunk_seconds": ("histogram", "Per audio frame: from handing it to the provider to its turns coming back, by provider."),
        "speakersync_provider_real_time_factor": ("histogram", "Per session: provider CPU seconds over audio seconds, by provider."),
        "speakersync_word_label_latency_seconds": ("histogram", "Per labelled word: from having the word and its audio to the first update that gave it a speaker, by provider."),
        "speakersync_asr_words_total": ("counter", "Words the server recognised itself in asr=server sessions (merged like received words)."),
        "speakersync_asr_failures_total": ("counter", "Utterances the server's speech recogniser could not decode (their words are lost), by code."),
        "speakersync_asr_real_time_factor": ("histogram", "Per asr=server session: speech recogniser CPU seconds over audio seconds."),
        "speakersync_http_requests_total": ("counter", "HTTP requests answered, by route and status."),
        "speakersync_resident_memory_bytes": ("gauge", "Resident memory of the server process and its provider workers."),
        "speakersync_store_queue_depth": ("gauge", "Session steps waiting in the store writer: queued, being encoded or being committed."),
        "speakersync_store_commit_seconds": ("histogram", "Per committed store transaction: seconds from BEGIN to COMMIT."),
    ]

    public init() {
        // Unlabelled counters exist from the start at 0, so rate() and absent() work from the first scrape.
        state.withLock { state in
            for name in ["speakersync_words_received_total", "speakersync_words_stored_total",
                         "speakersync_store_failures_total", "speakersync_asr_words_total"] {
                state.counters[Series(name: name, labels: [:])] = 0
            }
        }
    }

    public func increment(_ name: String, _ labels: [String: String] = [:], by amount: Double = 1) {
        state.withLock { $0.counters[Series(name: name, labels: labels), default: 0] += amount }
    }

    public func add(gauge name: String, _ labels: [String: String] = [:], _ amount: Double) {
        state.withLock { $0.gauges[Series(name: name, labels: labels), default: 0] += amount }
    }

    public func set(gauge name: String, _ labels: [String: String] = [:], _ value: Double) {
        state.withLock { $0.gauges[Series(name: name, labels: labels)] = value }
    }

    public func observe(_ name: String, _ labels: [String: String] = [:], _ value: Double, buckets: [Double] = ServerMetrics.latencyBuckets) {
        observe(name, labels, values: CollectionOfOne(value), buckets: buckets)
    }

    /// Many observations of one series under one lock: a session's end observes each of its words'
    /// label latencies, and hundreds of sessions ending together would otherwise queue on the lock
    /// once per word (a tenth of the server's CPU at 500 sessions ending within a second).
    public func observe(_ name: String, _ labels: [String: String] = [:], values: some Sequence<Double>,
                        buckets: [Double] = ServerMetrics.latencyBuckets) {
        let series = Series(name: name, labels: labels)
        state.withLock { state in
            // Mutated in place: copying the histogram out and back would copy its counts each time.
            state.histograms[series, default: Histogram(bounds: buckets)].observe(values.lazy.filter(\.isFinite))
        }
    }

    /// A gauge whose value `read` returns each time the page is rendered (called then, on the HTTP
    /// worker; it must be cheap). Registering the same series again replaces the reader.
    public func sample(gauge name: String, _ labels: [String: String] = [:], _ read: @escaping @Sendable () -> Double) {
        samplers.withLock { $0[Series(name: name, labels: labels)] = read }
    }

    /// The exposition text: HELP and TYPE once per family, then its series in a stable order.
    public func render() -> String {
        for (series, read) in samplers.withLock({ $0 }) { set(gauge: series.name, series.labels, read()) }
        let snapshot = state.withLock { $0 }
        var families: [String: [String]] = [:]
        for (series, value) in snapshot.counters.sorted(by: { $0.key < $1.key }) {
            families[series.name, default: []].append("\(series.name)\(series.labelText) \(Self.number(value))")
        }
        for (series, value) in snapshot.gauges.sorted(by: { $0.key < $1.key }) {
            families[series.name, default: []].append("\(series.name)\(series.labelText) \(Self.number(value))")
        }
        for (series, histogram) in snapshot.histograms.sorted(by: { $0.key < $1.key }) {
            var lines: [String] = []
            for (bound, count) in zip(histogram.bounds, histogram.counts) {
                var labels = series.labels
                labels["le"] = Self.number(bound)
                lines.append("\(series.name)_bucket\(Series(name: "", labels: labels).labelText) \(count)")
            }
            var infinite = series.labels
            infinite["le"] = "+Inf"
            lines.append("\(series.name)_bucket\(Series(name: "", labels: infinite).labelText) \(histogram.count)")
            lines.append("\(series.name)_sum\(series.labelText) \(Self.number(histogram.sum))")
            lines.append("\(series.name)_count\(series.labelText) \(histogram.count)")
            families[series.name, default: []] += lines
        }
        // Every family is described, series or not: a scraper sees what this server can report before
        // the first session has produced a labelled series.
        var text = ""
        for name in Set(families.keys).union(help.keys).sorted() {
            if let (type, helpText) = help[name] {
                text += "# HELP \(name) \(helpText)\n# TYPE \(name) \(type)\n"
            }
            if let lines = families[name] { text += lines.joined(separator: "\n") + "\n" }
        }
        return text
    }

    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
