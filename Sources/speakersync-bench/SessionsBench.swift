import ArgumentParser
import ChildProcesses
import Foundation
import Logging
import MeetingSynth
import SpeakerSyncClient
import Synchronization
import WebSocketTransport

/// Concurrent device-like sessions at real-time pace against a real server process.
///
/// The server runs as a separate `speakersync serve` process (embedded PostgreSQL in a temporary
/// folder, or --database-url) so its CPU time and memory can be read from /proc apart from the
/// load generator, which runs here on the same 2-core machine and competes with it for CPU.
struct SessionsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sessions", abstract: "How many real-time device sessions the server holds, with words→update latency, CPU and memory per session.")

    @Option(help: "Comma-separated concurrency levels to run in turn.")
    var levels: String = "50,100,200,300"

    @Option(help: "Seconds of meeting each session streams (a synthetic 2-speaker meeting of 32 s, looped).")
    var seconds: Double = 30

    @Option(name: .customLong("database-url"))
    var databaseURL: String?

    @Option(help: "Provider for the sessions.")
    var provider: String = "device"

    @Option(help: "The start message's options for every session (JSON), e.g. '{\"overlap\": false}' for speakerkit without its overlap pass.")
    var options: String?

    @Option(name: .customLong("shadow"), help: "A provider every session runs beside --provider (shadow_providers; repeatable): what it costs the primary's latency.")
    var shadows: [String] = []

    @Option(help: "The server's --provider-isolation: process, session or none.")
    var isolation: String = "process"
    @Option(name: .customLong("load-shedding"), help: "The server's --load-shedding: on (its default) or off.")
    var loadShedding: String = "on"

    @Option(name: .customLong("chunk-seconds"), help: "Audio per frame a device sends (0.1 = the 100 ms frames of the published figures).")
    var chunkSeconds = 0.1
    @Option(name: .customLong("pacing-tick-ms"), help: "Each session sends a chunk at the first tick of a shared clock of this period at or after its due time (DeviceStreamConfig.pacingTickSeconds), so the load generator wakes once a tick, not once per session and chunk; 0: every session on its own instant.")
    var pacingTickMilliseconds = 10.0
    @Flag(help: "Also print the words→update latency by when the words were sent (5 s buckets, and the words sent with the stop).")
    var verbose = false
    @Option(name: .customLong("client-threads"), help: "WebSocket client service threads the load generator spreads its sessions over (each a libwebsockets context).")
    var clientThreads = 1
    @Option(help: "Also write every level's figures to this JSON file (what scripts/publish-figures reads).")
    var json: String?

    func run() async throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let script = try MeetingScript.generate(seed: 3, speakerCount: 2, turnCount: 8)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: 3)
        let server = try ServerProcess(databaseURL: databaseURL, isolation: isolation, extraArguments: ["--load-shedding", loadShedding])
        defer { server.stop() }
        print("server pid \(server.pid) on port \(server.port), provider \(provider)\(shadows.isEmpty ? "" : " with shadows " + shadows.joined(separator: ",")), isolation \(isolation); CPU and RSS are the server's plus its provider workers'; meeting \(String(format: "%.1f", meeting.durationSeconds)) s, \(meeting.words.count) words; streaming \(Int(seconds)) s per session at 1x")
        print("Each session is a device of its own with its own device token (as in production: no credential's rate limit is shared); "
            + "a session counts as ok when it closed 1000 with every word back, and every other one is listed with its reason.")
        print("sessions  ok  words/update p50 ms  p99 ms  max ms  server CPU %  CPU ms/s per session  server RSS MB  RSS KB per session  label p50 ms  p95 ms  load generator CPU %  CPU ms per audio s  finalize p50 s  p95 s  final words right %  worst %")
        var failed = 0
        var results: [[String: Any]] = []
        for level in levels.split(separator: ",").compactMap({ Int($0) }) {
            let (line, failures, figures) = try await runLevel(level, meeting: meeting, server: server, logger: logger)
            print(line)
            for failure in failures { print("    failed: \(failure)") }
            failed += failures.count
            results.append(figures)
        }
        if let json {
            let document: [String: Any] = [
                "provider": provider, "options": options ?? "", "isolation": isolation, "load_shedding": loadShedding, "seconds": seconds,
                "chunk_seconds": chunkSeconds, "shadows": shadows, "client_threads": clientThreads, "levels": results,
            ]
            try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: json))
        }
        // A figure over the sessions that happened to succeed is not a figure: say so with the exit status.
        if failed > 0 {
            print("\(failed) session(s) failed; the figures above are not a capacity")
            throw ExitCode(1)
        }
    }

    /// Device tokens for a level's sessions (`bench-0` …), made with the admin key before the clock
    /// starts. Admin calls are rate limited like any credential's: a 429 waits for its Retry-After.
    func deviceTokens(count: Int, server: ServerProcess) throws -> [String] {
        var tokens: [String] = []
        while tokens.count < count {
            let url = "http://127.0.0.1:\(server.port)/v1/devices/bench-\(tokens.count)/tokens?label=bench"
            let response = try SimpleHTTPClient.request(method: "POST", url: url, body: [], token: server.adminKey)
            if response.status == 429 {
                Thread.sleep(forTimeInterval: Double(response.headers["retry-after"] ?? "1") ?? 1)
                continue
            }
            guard response.status == 201, let token = (response.json() as? [String: Any])?["token"] as? String else {
                throw ValidationError("creating a device token answered \(response.status): \(response.text)")
            }
            tokens.append(token)
        }
        return tokens
    }

    func runLevel(_ count: Int, meeting: SynthesizedMeeting, server: ServerProcess, logger: Logger) async throws
        -> (line: String, failures: [String], figures: [String: Any]) {
        let tokens = try deviceTokens(count: count, server: server)
        // The meeting looped to `seconds` (it is 32 s; a sustained load needs minutes), words and turns
        // shifted by each loop's start.
        let loopSeconds = meeting.durationSeconds
        let loops = max(1, Int((seconds / loopSeconds).rounded(.up)))
        let clip = Int(min(seconds, loopSeconds * Double(loops)) * Double(meeting.sampleRate))
        let audio = Array(Array(repeating: meeting.audio, count: loops).joined().prefix(clip))
        let end = Double(clip) / Double(meeting.sampleRate)
        let looped = (0 ..< loops).flatMap { loop in
            meeting.words.map { SynthWord(text: $0.text, startSeconds: $0.startSeconds + Double(loop) * loopSeconds,
                                          endSeconds: $0.endSeconds + Double(loop) * loopSeconds, speaker: $0.speaker) }
        }.filter { $0.endSeconds <= end }
        let words = looped.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        let segments = (0 ..< loops).flatMap { loop in
            meeting.turns.map { DeviceSegment(speaker: $0.speaker, startSeconds: $0.startSeconds + Double(loop) * loopSeconds,
                                              endSeconds: min(end, $0.endSeconds + Double(loop) * loopSeconds)) }
        }.filter { $0.startSeconds < end }
        // Every session sends the same audio: encode it once. (Each session encoding its own copy put
        // 500 × 20 s of PCM conversion on the load generator in the starts' first second, on the cores
        // the server was starting those sessions on.)
        let messages = AudioMessages.pcm(audio, sampleRate: meeting.sampleRate, chunkSamples: Int(chunkSeconds * Double(meeting.sampleRate)))
        // One client is one libwebsockets service thread: at hundreds of sessions it is the load
        // generator's bottleneck, which the latencies would then measure.
        let clients = try (0 ..< max(1, clientThreads)).map { _ in try WebSocketClient(logger: logger) }
        defer { clients.forEach { $0.shutdown() } }
        let rssBefore = server.residentKilobytes()
        let cpuBefore = server.cpuSeconds()
        let generatorBefore = Self.ownCPUSeconds()
        let began = ContinuousClock.now
        let peakRSS = Mutex(rssBefore)
        let sampler = Task {
            while !Task.isCancelled {
                let now = server.residentKilobytes()
                peakRSS.withLock { $0 = max($0, now) }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        let outcomes = await withTaskGroup(of: (index: Int, result: Result<StreamReport, any Error>).self) { group in
            for index in 0..<count {
                group.addTask {
                    // Stagger starts over one second, as real devices would not start in lockstep.
                    try? await Task.sleep(for: .milliseconds(Int64(index * 1000 / max(1, count))))
                    var config = DeviceStreamConfig(url: "ws://127.0.0.1:\(server.port)/v1/listen", provider: provider, deviceID: "bench-\(index)")
                    config.shadowProviders = shadows
                    config.optionsJSON = options
                    config.token = tokens[index]
                    config.speed = 1
                    config.pacingTickSeconds = pacingTickMilliseconds > 0 ? pacingTickMilliseconds / 1000 : nil
                    config.chunkSeconds = chunkSeconds
                    config.finalizeTimeoutSeconds = 60
                    do {
                        return (index, .success(try await DeviceStreamer(client: clients[index % clients.count], config: config, logger: logger)
                            .stream(messages, words: words, segments: provider == "device" ? segments : [])))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var all: [(index: Int, result: Result<StreamReport, any Error>)] = []
            for await outcome in group { all.append(outcome) }
            return all.sorted { $0.index < $1.index }
        }
        sampler.cancel()
        let elapsed = (ContinuousClock.now - began).seconds
        let cpu = server.cpuSeconds() - cpuBefore
        let generatorCPU = Self.ownCPUSeconds() - generatorBefore
        var reports: [StreamReport] = []
        var failures: [String] = []
        for outcome in outcomes {
            switch outcome.result {
            case .failure(let error):
                failures.append("bench-\(outcome.index): \(error)")
            case .success(let report):
                reports.append(report)
                if report.closeCode != 1000 || report.transcript.words.count != words.count {
                    let errors = report.errors.map { "\($0.code): \($0.message)" }.joined(separator: "; ")
                    failures.append("bench-\(outcome.index): close \(report.closeCode.map(String.init) ?? "none"), \(report.transcript.words.count) of \(words.count) words back"
                        + (errors.isEmpty ? "" : " (\(errors))"))
                }
            }
        }
        // Final labels against who said each word, per session (what load shedding may coarsen; one-to-one
        // label mapping, as `demo` reports it).
        let truth = looped.map { ($0.text, $0.startSeconds, $0.speaker) }
        let agreements = reports.map { report in
            WordSpeakerAgreement(truth: truth, labelled: report.transcript.words.map { ($0.text, $0.startSeconds, $0.speaker) }).accuracy * 100
        }
        let meanAgreement = agreements.isEmpty ? Double.nan : agreements.reduce(0, +) / Double(agreements.count)
        let worstAgreement = agreements.min() ?? .nan
        /// The value at rank ⌊n·p⌋ of sorted values (the bench's convention since its first figures).
        func rank(_ sorted: [Double], _ p: Double) -> Double {
            sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        let latencies = reports.flatMap(\.wordUpdateLatencies).sorted()
        func percentile(_ p: Double) -> Double { rank(latencies, p) * 1000 }
        if verbose {
            // Where the slow updates are: p99 by when the word was sent.
            var buckets: [Int: [Double]] = [:]
            // Words sent once the last audio is out go with the `stop`: their updates meet every
            // session's finalize, so they get a line of their own.
            var withStop: [Double] = []
            for report in reports {
                for (latency, sent) in zip(report.wordUpdateLatencies, report.wordUpdateSentSeconds) {
                    if sent >= end - chunkSeconds {
                        withStop.append(latency * 1000)
                    } else {
                        buckets[Int(sent / 5), default: []].append(latency * 1000)
                    }
                }
            }
            func line(_ when: String, _ unsorted: [Double]) {
                let values = unsorted.sorted()
                print("    words \(when): " + String(format: "%5d words, p50 %7.1f ms, p99 %7.1f ms", values.count,
                                                       values[values.count / 2], values[min(values.count - 1, values.count * 99 / 100)]))
            }
            for key in buckets.keys.sorted() { line(String(format: "sent %3d-%3d s", key * 5, key * 5 + 5), buckets[key]!) }
            if !withStop.isEmpty { line("with the stop ", withStop) }
        }
        // Label latency from each session's stats (the server's own measure: words and their audio in →
        // first transcript update giving them a speaker), parsed here, after the run.
        let labelLatencies = reports.compactMap(\.statsMessage).flatMap { text -> [Double] in
            let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
            return (object?["first_label_latency_seconds"] as? [NSNumber])?.map(\.doubleValue) ?? []
        }.sorted()
        func labelPercentile(_ p: Double) -> Double { rank(labelLatencies, p) * 1000 }
        // The wait for final labels: where work a saturated server deferred (shed windows, segmentation
        // left to idle CPU) shows.
        let finalizeTimes = reports.compactMap(\.finalizeSeconds).sorted()
        func finalizePercentile(_ p: Double) -> Double { rank(finalizeTimes, p) }
        // CPU per session per second of audio, finalize included: per wall second (the column before)
        // reads lower when the run's tail is finalizing rather than streaming.
        let perAudioSecond = cpu * 1000 / (Double(count) * end)
        let ok = count - failures.count
        let peak = peakRSS.withLock { $0 }
        let line = String(
            format: "%8d %4d %20.1f %7.1f %7.1f %13.1f %21.2f %14.1f %19.1f %17.0f %7.0f %21.1f %19.2f %14.1f %6.1f %21.1f %7.1f",
            count, ok, percentile(0.5), percentile(0.99), (latencies.last ?? .nan) * 1000,
            cpu / elapsed * 100, cpu / elapsed * 1000 / Double(count), Double(peak) / 1024,
            Double(peak - rssBefore) / Double(count), labelPercentile(0.5), labelPercentile(0.95), generatorCPU / elapsed * 100,
            perAudioSecond, finalizePercentile(0.5), finalizePercentile(0.95), meanAgreement, worstAgreement
        )
        func number(_ value: Double) -> Any { value.isFinite ? value : NSNull() }
        let figures: [String: Any] = [
            "sessions": count, "completed": ok, "failures": failures,
            "words_update_ms": ["p50": number(percentile(0.5)), "p99": number(percentile(0.99)), "max": number((latencies.last ?? .nan) * 1000)],
            "server_cpu_percent": number(cpu / elapsed * 100), "cpu_ms_per_session_second": number(cpu / elapsed * 1000 / Double(count)),
            "label_ms": ["p50": number(labelPercentile(0.5)), "p95": number(labelPercentile(0.95))],
            "load_generator_cpu_percent": number(generatorCPU / elapsed * 100),
            "cpu_ms_per_session_audio_second": number(perAudioSecond),
            "finalize_seconds": ["p50": number(finalizePercentile(0.5)), "p95": number(finalizePercentile(0.95))],
            "final_word_agreement_percent": ["mean": number(meanAgreement), "worst": number(worstAgreement)],
        ]
        return (line, failures, figures)
    }

    /// This process's CPU time (every thread): the load generator's share of the two cores.
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}

/// `speakersync serve` as a child process on a free port, with its own embedded cluster.
final class ServerProcess: Sendable {
    let pid: Int32
    let port: Int
    /// The child's admin key (SPEAKERSYNC_ADMIN_KEY), which the sessions present.
    let adminKey = "bench-admin-" + UUID().uuidString.lowercased()
    private let process: Subprocess
    private let dataDirectory: String?

    init(databaseURL: String?, isolation: String = "process", extraArguments: [String] = []) throws {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("speakersync")
        port = try Self.freePort()
        // Every simulated device connects from 127.0.0.1 with the one admin key: the per-address share
        // (256 connections by default) and the per-credential rate limit (20 upgrades a second, burst 60)
        // would refuse the levels above them, which real devices, each on its own address with its own
        // token, never meet. This measures what the server holds, not those limits.
        var arguments = ["serve", "--port", "\(port)", "--log-level", "error", "--provider-isolation", isolation,
                         "--max-connections-per-address", "0", "--requests-per-second", "0"] + extraArguments
        if let databaseURL {
            arguments += ["--database-url", databaseURL]
            dataDirectory = nil
        } else {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-bench-\(UUID().uuidString.prefix(8))").path
            arguments += ["--data-dir", dir]
            dataDirectory = dir
        }
        var environment = ProcessInfo.processInfo.environment
        environment["SPEAKERSYNC_ADMIN_KEY"] = adminKey
        var configuration = Subprocess.Configuration(executable: executable.path, arguments: arguments, environment: environment)
        configuration.standardOutput = .inherit
        configuration.standardError = .inherit
        let process = try Subprocess(configuration)
        self.process = process
        pid = process.processIdentifier
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if (try? SimpleHTTPClient.get("http://127.0.0.1:\(port)/healthz", timeoutSeconds: 2))?.status == 200 { return }
            guard process.isRunning else { throw ValidationError("speakersync serve ended with \(process.waitUntilExit())") }
            Thread.sleep(forTimeInterval: 0.2)
        }
        throw ValidationError("the server did not become healthy within 60 s")
    }

    func stop() {
        guard process.isRunning else { return }
        process.signal(SIGINT)
        process.waitUntilExit()
        if let dataDirectory { try? FileManager.default.removeItem(atPath: dataDirectory) }
    }

    /// The server and its provider workers (not its embedded PostgreSQL, which is counted nowhere, as
    /// before isolation).
    func processIDs() -> [Int32] {
        var ids: [Int32] = [pid]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let child = Int32(entry), child != pid,
                  let stat = try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 2, Int32(fields[1]) == pid,
                  let command = try? String(contentsOfFile: "/proc/\(child)/cmdline", encoding: .utf8),
                  command.contains("provider-worker") else { continue }
            ids.append(child)
        }
        return ids
    }

    /// User + system CPU seconds so far of the server and its workers. A worker that ended (crashed,
    /// or a session's) is counted through the server's children's time.
    func cpuSeconds() -> Double {
        processIDs().reduce(0) { $0 + Self.cpuSeconds(pid: $1, includingReapedChildren: $1 == pid) }
    }

    static func cpuSeconds(pid: Int32, includingReapedChildren: Bool) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3; utime and stime are fields 14 and 15.
        guard fields.count > 15, let user = Double(fields[11]), let system = Double(fields[12]),
              let childUser = Double(fields[13]), let childSystem = Double(fields[14]) else { return 0 }
        // Reaped children of the server: its ended workers, and pg_ctl/initdb, which ran before the first level.
        let children = includingReapedChildren ? childUser + childSystem : 0
        return (user + system + children) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func residentKilobytes() -> Int {
        processIDs().reduce(0) { $0 + Self.residentKilobytes(pid: $1) }
    }

    static func residentKilobytes(pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ")[1]) ?? 0
        }
        return 0
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ValidationError("cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
