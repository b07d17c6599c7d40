import ArgumentParser
import Foundation
import Logging
import SpeakerSyncServer

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the SpeakerSync server until interrupted.")

    @OptionGroup var server: ServerOptions

    func run() async throws {
        let logger = makeLogger(level: server.logLevel)
        let app = SpeakerSyncApplication(config: server.makeConfig(), logger: logger)
        let port = try app.start()
        logger.info("SpeakerSync listening", metadata: ["ws": "ws://\(server.host):\(port)/v1/listen", "http": "http://\(server.host):\(port)/v1/conversations"])
        await waitForTermination()
        logger.info("shutting down")
        app.shutdown()
    }
}

/// Suspends until SIGINT or SIGTERM.
func waitForTermination() async {
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let queue = DispatchQueue(label: "speakersync.signals")
        let sources = [SIGINT, SIGTERM].map { DispatchSource.makeSignalSource(signal: $0, queue: queue) }
        let resumed = ResumeOnce(continuation)
        for source in sources {
            source.setEventHandler { resumed.resume() }
            source.resume()
        }
        SignalSources.keep(sources)
    }
}

/// Keeps signal sources alive for the process lifetime.
enum SignalSources {
    nonisolated(unsafe) private static var retained: [any DispatchSourceSignal] = []
    static func keep(_ sources: [any DispatchSourceSignal]) { retained += sources }
}

final class ResumeOnce: @unchecked Sendable {
    private var continuation: CheckedContinuation<Void, Never>?
    private let lock = NSLock()
    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }
    func resume() {
        lock.lock()
        let pending = continuation
        continuation = nil
        lock.unlock()
        pending?.resume()
    }
}

func makeLogger(level: String, label: String = "speakersync") -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = Logger.Level(rawValue: level) ?? .info
    return logger
}
