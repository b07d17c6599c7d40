import Dispatch
import Foundation

/// SIGINT and SIGTERM, caught from the moment this is made until `wait` returns. Made before the work
/// whose end it waits for: installing the handlers only when the wait begins set both signals to
/// SIG_IGN then, which discards one already pending, so a SIGTERM sent while `serve` started (an
/// orchestrator, or a test, stopping it as soon as it logs "listening") was lost and the server ran on.
/// `@unchecked Sendable`: `fired`, `continuation` and `sources` are only touched under `lock`.
final class TerminationSignals: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var continuation: CheckedContinuation<Void, Never>?
    private var sources: [any DispatchSourceSignal] = []

    init() {
        // The dispatch sources receive the signals; the default action (terminate) must not.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let queue = DispatchQueue(label: "speakersync.signals")
        for number in [SIGINT, SIGTERM] {
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in self?.fire(number) }
            sources.append(source)
            source.resume()
        }
    }

    /// Returns on the first signal, at once if one already came.
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let retained: [any DispatchSourceSignal]? = lock.withLock {
                if fired {
                    defer { sources = [] }
                    return sources
                }
                self.continuation = continuation
                return nil
            }
            if let retained {
                for source in retained { source.cancel() }
                continuation.resume()
            }
        }
    }

    /// The first signal ends the wait (at once if it has begun, else as soon as it does, after a clean
    /// start). A second one before the wait began ends the process, as the default action did: a start
    /// that hangs (PostgreSQL never answering) must still yield to Ctrl-C.
    private func fire(_ number: Int32) {
        let startingAgain = lock.withLock { fired && continuation == nil && !sources.isEmpty }
        if startingAgain { exit(128 + number) }
        let (pending, retained) = lock.withLock {
            fired = true
            // Kept until the wait takes the signal, so a second one during the start still reaches `fire`.
            guard let waiting = continuation else { return (nil as CheckedContinuation<Void, Never>?, [any DispatchSourceSignal]()) }
            defer { continuation = nil; sources = [] }
            return (waiting, sources)
        }
        for source in retained { source.cancel() }
        pending?.resume()
    }
}
