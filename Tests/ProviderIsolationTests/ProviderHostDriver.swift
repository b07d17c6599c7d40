import Dispatch
import Foundation
import Logging
import PluginHost
import Synchronization
import TestSupport
@testable import ProviderIsolation

/// Drives one provider session the way the server does: its own serial queue, events collected.
final class SessionDriver: @unchecked Sendable {
    let queue: DispatchQueue
    private(set) var session: (any ProviderSession)!
    private let events = EventLog()

    final class EventLog: Sendable {
        let events = Mutex<[ProviderEvent]>([])
    }

    init(host: any ProviderHost, provider: String, options: String = "{}", id: String = UUID().uuidString.prefix(8).lowercased()) throws {
        queue = DispatchQueue(label: "test.session.\(id)")
        let log = events
        session = try queue.sync {
            try host.makeSession(ProviderSessionRequest(providerID: provider, sessionID: id, optionsJSON: options), queue: queue) { event in
                log.events.withLock { $0.append(event) }
            }
        }
    }

    func push(_ samples: [Float]) { queue.async { self.session.push(samples: samples) } }
    func finalize() { queue.async { self.session.finalize() } }
    func close() { queue.sync { self.session.close() } }

    /// Pushes `audio` in 100 ms chunks.
    func stream(_ audio: [Float], chunk: Int = 1600) {
        var offset = 0
        while offset < audio.count {
            push(Array(audio[offset ..< min(audio.count, offset + chunk)]))
            offset += chunk
        }
    }

    var received: [ProviderEvent] { queue.sync { events.events.withLock { $0 } } }

    /// Every turn reported so far, in order (processed, then final).
    var turns: [ProviderTurn] {
        received.flatMap { event -> [ProviderTurn] in
            switch event {
            case .processed(let chunk): chunk.turns
            case .finalized(let result): result.turns
            case .failed: []
            }
        }
    }

    var failure: PluginError? {
        received.lazy.compactMap { if case .failed(let error) = $0 { error } else { nil } }.first
    }

    var finalResult: ProviderFinalResult? {
        received.lazy.compactMap { if case .finalized(let result) = $0 { result } else { nil } }.first
    }

    /// Pushes answered so far (an event may report several).
    var processedCount: Int {
        received.reduce(0) { count, event in if case .processed(let chunk) = event { count + chunk.chunkWallSeconds.count } else { count } }
    }

    /// Waits (polling, at most `seconds`) until `condition` holds; false if it never did.
    @discardableResult
    func wait(seconds: Double = 60, until condition: (SessionDriver) -> Bool) -> Bool {
        Polling.until(seconds: seconds) { condition(self) }
    }
}

enum Hosts {
    static var logger: Logger {
        var logger = Logger(label: "isolation-test")
        logger.logLevel = .critical
        return logger
    }

    /// Short deadlines and a quick restart, so hangs and crash loops resolve within a test.
    static func config(_ mode: ProviderIsolationMode = .process, pushSeconds: Double = 5, finalizeSeconds: Double = 30,
                       crashes: Int = 50, quarantineSeconds: Double = 2, memoryLimitBytes: UInt64? = 2 << 30) -> ProviderIsolationConfig {
        ProviderIsolationConfig(
            mode: mode, memoryLimitBytes: memoryLimitBytes,
            deadlines: ProviderDeadlines(loadSeconds: 60, createSeconds: 30, pushSeconds: pushSeconds, finalizeSeconds: finalizeSeconds, embedVoiceSeconds: 60),
            crashLoop: CrashLoopPolicy(threshold: crashes, windowSeconds: 60, quarantineSeconds: quarantineSeconds,
                                       initialBackoffSeconds: 0.05, maximumBackoffSeconds: 0.5),
            niceIncrement: 0, watchdogIntervalSeconds: 0.1)
    }

    /// 16 kHz audio with speech-like energy: alternating tones, for providers that need something to hear.
    static func tones(seconds: Double) -> [Float] {
        let count = Int(seconds * 16_000)
        return (0 ..< count).map { index in
            let t = Double(index) / 16_000
            let pitch = Int(t) % 2 == 0 ? 140.0 : 290.0
            let envelope = t.truncatingRemainder(dividingBy: 1) < 0.8 ? 0.3 : 0.0
            return Float(envelope * sin(2 * .pi * pitch * t))
        }
    }
}
