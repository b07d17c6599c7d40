import Foundation
import MeetingSynth
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// A Prometheus text-format (0.0.4) reader, strict enough to catch malformed exposition: every sample
/// line parses, every family has a TYPE, histogram buckets are cumulative and end with +Inf = count.
struct PrometheusText {
    /// "name{a="x",b="y"}" (labels sorted) → value.
    var samples: [String: Double] = [:]
    var types: [String: String] = [:]

    struct Failure: Error, CustomStringConvertible { var description: String }

    init(_ text: String) throws {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                guard parts.count == 4 else { throw Failure(description: "bad TYPE line: \(line)") }
                types[String(parts[2])] = String(parts[3])
                continue
            }
            if line.hasPrefix("#") { continue }
            let (series, value) = try Self.sample(String(line))
            samples[series] = value
        }
        for series in samples.keys {
            let name = String(series.prefix { $0 != "{" })
            let family = ["_bucket", "_sum", "_count"].reduce(name) { $0.hasSuffix($1) && types[$0] == nil ? String($0.dropLast($1.count)) : $0 }
            guard types[family] != nil else { throw Failure(description: "no TYPE for \(series)") }
        }
    }

    static func sample(_ line: String) throws -> (String, Double) {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
            throw Failure(description: "no value: \(line)")
        }
        let head = line[..<space]
        guard let brace = head.firstIndex(of: "{") else { return (String(head), value) }
        guard head.hasSuffix("}") else { throw Failure(description: "unclosed labels: \(line)") }
        var labels: [(String, String)] = []
        var rest = head[head.index(after: brace)..<head.index(before: head.endIndex)]
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "="), rest[rest.index(after: equals)] == "\"" else { throw Failure(description: "bad label: \(line)") }
            let key = String(rest[..<equals])
            var index = rest.index(equals, offsetBy: 2)
            var value = ""
            while index < rest.endIndex, rest[index] != "\"" {
                if rest[index] == "\\" { index = rest.index(after: index) }
                value.append(rest[index])
                index = rest.index(after: index)
            }
            guard index < rest.endIndex else { throw Failure(description: "unterminated value: \(line)") }
            labels.append((key, value))
            rest = rest[rest.index(after: index)...]
            if rest.hasPrefix(",") { rest = rest.dropFirst() }
        }
        let name = String(head[..<brace])
        return (name + "{" + labels.sorted { $0.0 < $1.0 }.map { "\($0.0)=\"\($0.1)\"" }.joined(separator: ",") + "}", value)
    }

    func value(_ series: String) -> Double? { samples[series] }
}

@Suite struct MetricsTests {
    @Test func theExpositionIsValidPrometheusText() throws {
        let metrics = ServerMetrics()
        metrics.increment("speakersync_sessions_started_total", ["provider": "device"])
        metrics.increment("speakersync_sessions_started_total", ["provider": "device"])
        metrics.increment("speakersync_http_requests_total", ["route": "providers", "status": "200"])
        metrics.add(gauge: "speakersync_sessions_active", ["provider": "we\"ird\\name"], 1)
        for value in [0.003, 0.2, 0.2, 7.0, 100.0] { metrics.observe("speakersync_provider_chunk_seconds", ["provider": "energy"], value) }
        let parsed = try PrometheusText(metrics.render())
        #expect(parsed.value(#"speakersync_sessions_started_total{provider="device"}"#) == 2)
        #expect(parsed.value(#"speakersync_sessions_active{provider="we"ird\name"}"#) == 1) // escaped and read back
        #expect(parsed.types["speakersync_provider_chunk_seconds"] == "histogram")
        // Buckets are cumulative; +Inf holds every observation.
        #expect(parsed.value(#"speakersync_provider_chunk_seconds_bucket{le="0.005",provider="energy"}"#) == 1)
        #expect(parsed.value(#"speakersync_provider_chunk_seconds_bucket{le="0.25",provider="energy"}"#) == 3)
        #expect(parsed.value(#"speakersync_provider_chunk_seconds_bucket{le="10",provider="energy"}"#) == 4)
        #expect(parsed.value(#"speakersync_provider_chunk_seconds_bucket{le="+Inf",provider="energy"}"#) == 5)
        #expect(parsed.value(#"speakersync_provider_chunk_seconds_count{provider="energy"}"#) == 5)
        #expect(abs((parsed.value(#"speakersync_provider_chunk_seconds_sum{provider="energy"}"#) ?? 0) - 107.403) < 1e-9)
    }

    /// A session's end observes all its words' latencies in one call: the same histogram as one by one.
    @Test func manyObservationsInOneCallEqualThemOneByOne() throws {
        let values = [0.003, 0.2, .nan, 0.2, 7.0, 100.0, .infinity]
        let single = ServerMetrics()
        for value in values { single.observe("speakersync_word_label_latency_seconds", ["provider": "device"], value) }
        let batched = ServerMetrics()
        batched.observe("speakersync_word_label_latency_seconds", ["provider": "device"], values: values)
        #expect(batched.render() == single.render())
        let parsed = try PrometheusText(batched.render())
        #expect(parsed.value(#"speakersync_word_label_latency_seconds_count{provider="device"}"#) == 5) // NaN and ∞ left out
    }

    @Test func aSessionsWordsAndCloseAreCountedAndScrapingNeedsACredential() async throws {
        let server = try EndToEndTests.TestServer()
        let script = try MeetingScript.generate(seed: 51, speakerCount: 2, turnCount: 6)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 51)
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let segments = meeting.turns.map { DeviceSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let report = try await server.stream(DeviceStreamConfig(url: server.ws, provider: "device", deviceID: "phone-m"),
                                             audio: meeting.audio, sampleRate: meeting.sampleRate, words: words, segments: segments)
        #expect(report.closeCode == 1000)
        #expect(try SimpleHTTPClient.get(server.http + "/metrics").status == 401)

        // The server counts the end when it sees the socket close, just after the client does.
        var parsed = try PrometheusText("")
        for _ in 0..<600 {
            parsed = try PrometheusText(try server.request("GET", "/metrics").text)
            if parsed.value(#"speakersync_sessions_ended_total{close_code="1000",provider="device"}"#) == 1 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(parsed.value(#"speakersync_sessions_started_total{provider="device"}"#) == 1)
        #expect(parsed.value(#"speakersync_sessions_ended_total{close_code="1000",provider="device"}"#) == 1)
        #expect(parsed.value(#"speakersync_sessions_active{provider="device"}"#) == 0)
        #expect(parsed.value("speakersync_words_received_total") == Double(words.count))
        #expect((parsed.value("speakersync_words_stored_total") ?? 0) >= Double(words.count))
        #expect(parsed.value(#"speakersync_word_label_latency_seconds_count{provider="device"}"#) == Double(words.count))
        #expect(parsed.value(#"speakersync_http_requests_total{route="metrics",status="401"}"#) == 1)
        #expect((parsed.value("speakersync_resident_memory_bytes") ?? 0) > 0)

        // The store: the session's words were committed, each commit timed; nothing waits once it ended.
        #expect(parsed.types["speakersync_store_commit_seconds"] == "histogram")
        #expect(parsed.types["speakersync_store_queue_depth"] == "gauge")
        let commits = try #require(parsed.value("speakersync_store_commit_seconds_count"))
        #expect(commits > 0)
        let buckets = ServerMetrics.commitBuckets.map { parsed.value("speakersync_store_commit_seconds_bucket{le=\"\(ServerMetrics.number($0))\"}") ?? -1 }
        #expect(buckets.allSatisfy { $0 >= 0 } && zip(buckets, buckets.dropFirst()).allSatisfy { $0 <= $1 }, "\(buckets)")
        #expect(parsed.value(#"speakersync_store_commit_seconds_bucket{le="+Inf"}"#) == commits)
        #expect((buckets.last ?? 0) <= commits)
        #expect((parsed.value("speakersync_store_commit_seconds_sum") ?? 0) > 0)
        var depth = parsed.value("speakersync_store_queue_depth")
        for _ in 0..<200 where depth != 0 {
            try await Task.sleep(for: .milliseconds(50))
            depth = try PrometheusText(try server.request("GET", "/metrics").text).value("speakersync_store_queue_depth")
        }
        #expect(depth == 0)
    }
}
