import Foundation
import Logging
import ResourcePooling

/// PocketSphinx recognisers shared by a process: each holds a loaded model (about a second and tens of
/// MB to load) and decodes one utterance at a time, so they are made when first needed, up to
/// `maximum`, lent to one caller at a time and kept for the next. Callers wait while all are busy.
///
/// Nothing is loaded until the first `prepare()` or `withRecognizer`; a server that never recognises
/// never pays for the model.
public final class RecognizerPool: Sendable {
    public let config: RecognizerConfig
    public let maximum: Int
    private let pool: ResourcePool<PocketSphinxRecognizer, any Error>

    /// `maximum`: decoders at once; more than the cores only adds memory.
    public init(config: RecognizerConfig = .default, maximum: Int = ProcessInfo.processInfo.activeProcessorCount, logger: Logger) {
        self.config = config
        self.maximum = max(1, maximum)
        pool = ResourcePool(maximum: maximum) { () throws(any Error) -> PocketSphinxRecognizer in
            let started = ContinuousClock.now
            let recognizer = try PocketSphinxRecognizer(config: config, logger: logger)
            logger.info("speech recogniser loaded", metadata: [
                "model": "\(config.modelDirectory)", "load_seconds": "\(String(format: "%.2f", (ContinuousClock.now - started).secondsValue))",
            ])
            return recognizer
        }
    }

    /// Recognisers loaded so far.
    public var loadedCount: Int { pool.madeCount }

    /// Makes sure a recogniser can be had: returns at once when one is loaded (busy or not), else loads
    /// the first, or throws the `RecognizerError` that says why it cannot (`model_not_found`,
    /// `decoder_init_failed`). A failure is not remembered: a model installed later is found by the next
    /// call.
    public func prepare() throws {
        if loadedCount > 0 { return }
        try withRecognizer { _ in }
    }

    /// `body` with a recogniser of the pool's, which goes back afterwards whatever happens.
    public func withRecognizer<R>(_ body: (PocketSphinxRecognizer) throws -> R) throws -> R {
        try pool.withResource(body)
    }
}

extension Duration {
    var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}
