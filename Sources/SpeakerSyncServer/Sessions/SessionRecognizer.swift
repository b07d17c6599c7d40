import Dispatch
import Logging
import PluginHost
import SpeechRecognition
import Synchronization

/// What a session's recogniser reports, on the session's queue.
enum RecognizerEvent {
    /// One pushed chunk was taken in; these utterances (often none) were closed and decoded by it.
    case processed([RecognizedUtterance])
    /// `finish()` is done: the last utterances; nothing more will come.
    case finished([RecognizedUtterance], cpuSeconds: Double)
}

/// Server-side speech recognition of one session (`asr: "server"`): its `StreamingRecognizer` runs on
/// a serial queue of its own, so decoding an utterance (a fraction of its length, yet up to seconds, and
/// perhaps waiting for a pooled model another session is using) never holds up the session's queue.
/// Results go back to the session's queue through `handler`, in order.
///
/// Threading: `push`, `finish` and `pendingSeconds` are called on the session's queue; the recogniser
/// is confined to `queue`.
final class SessionRecognizer: @unchecked Sendable {
    private let queue: DispatchQueue
    private let sessionQueue: DispatchQueue
    private let recognizer: StreamingRecognizer
    private let handler: (RecognizerEvent) -> Void
    private let logger: Logger
    private let sampleRate: Int
    /// Samples pushed and not yet taken in by the recogniser.
    private let pending = Atomic<Int>(0)
    /// CPU of the recogniser's work so far (confined to `queue`).
    private var cpuSeconds = 0.0

    /// `offsetSeconds`: where the session's first sample lies on the conversation timeline, so the
    /// words come out on that timeline as a device's would. Its own queue is named after the
    /// session's (`<session queue>.asr`).
    init(pool: RecognizerPool, sampleRate: Int, offsetSeconds: Double, sessionQueue: DispatchQueue,
         logger: Logger, handler: @escaping (RecognizerEvent) -> Void) throws {
        recognizer = try StreamingRecognizer(pool: pool, sampleRate: sampleRate, offsetSeconds: offsetSeconds)
        queue = DispatchQueue(label: "\(sessionQueue.label).asr")
        self.sessionQueue = sessionQueue
        self.handler = handler
        self.logger = logger
        self.sampleRate = sampleRate
    }

    /// Audio not yet recognised, in seconds: the session pauses reading beyond its limit.
    var pendingSeconds: Double { Double(pending.load(ordering: .relaxed)) / Double(sampleRate) }

    /// The session's next samples, at its own rate.
    func push(_ samples: [Float]) {
        guard !samples.isEmpty else { return }
        pending.add(samples.count, ordering: .relaxed)
        queue.async { [self] in
            let started = ThreadCPUTime.seconds()
            var utterances: [RecognizedUtterance] = []
            do {
                utterances = try recognizer.process(samples)
            } catch {
                // Only a finished stream or non-finite samples throw; the session's decoders give neither.
                logger.error("speech recogniser refused audio", metadata: ["error": "\(error)"])
            }
            cpuSeconds += ThreadCPUTime.seconds() - started
            pending.subtract(samples.count, ordering: .relaxed)
            let closed = utterances
            sessionQueue.async { [self] in handler(.processed(closed)) }
        }
    }

    /// Decodes the open utterance after everything pushed so far, then reports `.finished`.
    func finish() {
        queue.async { [self] in
            let started = ThreadCPUTime.seconds()
            var utterances: [RecognizedUtterance] = []
            do {
                utterances = try recognizer.finish()
            } catch {
                logger.error("speech recogniser could not finish", metadata: ["error": "\(error)"])
            }
            cpuSeconds += ThreadCPUTime.seconds() - started
            let cpu = cpuSeconds
            let last = utterances
            sessionQueue.async { [self] in handler(.finished(last, cpuSeconds: cpu)) }
        }
    }
}
