import Logging
import Synchronization

/// Routes lws's log lines (errors and warnings only) to a swift-log `Logger`.
///
/// lws has exactly one, process-wide log hook without a user pointer, so this is the one piece of
/// process-wide state in the transport: the logger of the most recently created context receives
/// the lines of all contexts. Each line is tagged `lws` so it is recognisable.
enum LWSLogRouter {
    private static let sink = Mutex<Logger?>(nil)

    static func install(_ logger: Logger) {
        sink.withLock { $0 = logger }
        LWS.setLogSink { level, line in
            guard let line else { return }
            var text = String(cString: line)
            while text.last == "\n" { text.removeLast() }
            guard let logger = LWSLogRouter.sink.withLock({ $0 }) else { return }
            if LWS.isErrorLevel(level) {
                logger.error("\(text)", metadata: ["component": "lws"])
            } else {
                logger.warning("\(text)", metadata: ["component": "lws"])
            }
        }
    }
}
