import ArgumentParser
import Foundation
import Logging
import MeetingSynth
import PluginHost
import ProviderIsolation
import SpeakerSyncServer
import Synchronization

/// What crossing the process boundary costs a provider call: sessions push 100 ms chunks of a
/// synthetic meeting into a provider hosted in this process (`none`) or in workers (`process`,
/// `session`), each waiting for its chunk's turns before the next (a device at full speed). Prints
/// the round trip per chunk and the CPU per chunk of this process plus the workers, beside the CPU the
/// provider itself reports, so the difference is the isolation's own cost.
struct IsolationBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "isolation", abstract: "Provider calls in process vs in worker processes: round trip and CPU per 100 ms chunk.")

    @Option(help: "Provider to call.") var provider = "energy"
    @Option(help: "Comma-separated isolation modes to compare, each run in turn.") var modes = "none,process"
    @Option(help: "Concurrent sessions.") var sessions = 1
    @Option(help: "Chunks each session pushes.") var chunks = 3000
    @Option(name: .customLong("chunk-samples"), help: "Samples per chunk (1600 = 100 ms at 16 kHz).") var chunkSamples = 1600
    @Option(help: "Runs of each mode, alternated (the medians are printed).") var repeats = 3
    @Option(name: .customLong("plugins"), help: "Plugins folder (default: beside this executable).") var plugins: String?

    func run() throws {
        var logger = Logger(label: "bench")
        logger.logLevel = .error
        let meeting = try MeetingSynthesizer().synthesize(try MeetingScript.generate(seed: 5, speakerCount: 2, turnCount: 12), seed: 5)
        let audio = meeting.audio
        let folder = ResourceLocator.pluginsDirectory(plugins)
        print("provider \(provider), \(sessions) session(s) × \(chunks) chunks of \(chunkSamples) samples, each waiting for its turns; \(repeats) alternated runs per mode, medians")
        print("mode      round trip p50 µs   p99 µs   CPU µs/chunk (all processes)   provider CPU µs/chunk   other CPU µs/chunk")
        var results: [String: [Run]] = [:]
        let list = modes.split(separator: ",").map(String.init)
        for _ in 0 ..< repeats {
            for mode in list {
                guard let isolation = ProviderIsolationMode(rawValue: mode) else { throw ValidationError("unknown mode \(mode)") }
                results[mode, default: []].append(try measure(isolation, folder: folder, audio: audio, logger: logger))
            }
        }
        for mode in list {
            let runs = results[mode] ?? []
            func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
            print(String(format: "%-8@ %18.1f %8.1f %30.1f %23.1f %20.1f", mode as NSString,
                         median(runs.map(\.p50)), median(runs.map(\.p99)), median(runs.map(\.cpuPerChunk)),
                         median(runs.map(\.providerCPUPerChunk)), median(runs.map { $0.cpuPerChunk - $0.providerCPUPerChunk })))
        }
    }

    struct Run {
        var p50: Double
        var p99: Double
        var cpuPerChunk: Double
        var providerCPUPerChunk: Double
    }

    private func measure(_ mode: ProviderIsolationMode, folder: String, audio: [Float], logger: Logger) throws -> Run {
        let host: any ProviderHost
        var workers: () -> [Int32] = { [] }
        if mode == .none {
            host = PluginRegistry(directory: folder, logger: logger)
        } else {
            var config = ProviderIsolationConfig.default
            config.mode = mode
            let isolated = try IsolatedProviderHost(directory: folder, config: config, logger: logger)
            host = isolated
            workers = { isolated.workerProcessIDs }
        }
        defer { host.shutdown() }
        let latencies = Mutex<[Double]>([])
        let providerCPU = Mutex(0.0)
        let clients = try (0 ..< sessions).map { index in try Client(host: host, provider: provider, index: index) }
        let cpuBefore = Self.cpuSeconds(workers())
        let threads = clients.enumerated().map { index, client in
            Thread {
                var own: [Double] = []
                var cpu = 0.0
                for chunk in 0 ..< chunks {
                    let start = (chunk * chunkSamples + index * 7919) % max(1, audio.count - chunkSamples)
                    let samples = Array(audio[start ..< start + chunkSamples])
                    let began = ContinuousClock.now
                    let result = client.roundTrip(samples)
                    own.append((ContinuousClock.now - began).microseconds)
                    cpu += result
                }
                latencies.withLock { $0 += own }
                providerCPU.withLock { $0 += cpu }
                client.done.signal()
            }
        }
        for thread in threads { thread.start() }
        for client in clients { client.done.wait() }
        let cpu = Self.cpuSeconds(workers()) - cpuBefore
        for client in clients { client.close() }
        let sorted = latencies.withLock { $0 }.sorted()
        let total = Double(sessions * chunks)
        return Run(p50: sorted[sorted.count / 2], p99: sorted[min(sorted.count - 1, sorted.count * 99 / 100)],
                   cpuPerChunk: cpu / total * 1e6, providerCPUPerChunk: providerCPU.withLock { $0 } / total * 1e6)
    }

    /// This process's CPU plus the given workers'.
    static func cpuSeconds(_ workers: [Int32]) -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let own = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return own + workers.reduce(0) { $0 + ServerProcess.cpuSeconds(pid: $1, includingReapedChildren: false) }
    }

    /// One session: pushes a chunk and waits for its turns. Sendable: `session` is set before the
    /// first push and `lastCPU` is touched only on `queue`.
    final class Client: @unchecked Sendable {
        let queue: DispatchQueue
        let replied = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        var session: (any ProviderSession)!
        var lastCPU = 0.0

        init(host: any ProviderHost, provider: String, index: Int) throws {
            queue = DispatchQueue(label: "bench.session.\(index)")
            let box = self
            session = try queue.sync {
                // Every push answered on its own: this measures the round trip, not the session's reporting.
                let request = ProviderSessionRequest(providerID: provider, sessionID: "bench-\(index)", optionsJSON: "{}", coalescesQuietPushes: false)
                return try host.makeSession(request, queue: queue) { event in
                    if case .processed(let chunk) = event { box.lastCPU = chunk.cpuSeconds }
                    box.replied.signal()
                }
            }
        }

        func roundTrip(_ samples: [Float]) -> Double {
            queue.async { self.session.push(samples: samples) }
            replied.wait()
            return queue.sync { lastCPU }
        }

        func close() { queue.sync { session.close() } }
    }
}

extension Duration {
    var microseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e6 + Double(attoseconds) * 1e-12
    }
}
