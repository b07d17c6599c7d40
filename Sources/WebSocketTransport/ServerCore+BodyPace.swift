import CLibWebSockets
import Dispatch

/// The pace of HTTP request bodies, and the deadline of the handler's answer (the same per-connection timer).
///
/// The pace of HTTP request bodies. lws bounds the headers as a whole (`handshakeTimeoutSeconds`) but
/// restarts its body timeout on every byte, so a client sending a body a byte at a time keeps its
/// connection, and with enough of them every connection the server allows. A timer per body being read
/// judges it against `WebSocketServerConfig.bodyDeadlineSeconds` and `minimumBodyBytesPerSecond`; a
/// body too slow gets 408 `request_timeout` and its connection closes. Service thread only.
extension ServerCore {
    static func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Called when the headers announced a body the server will read.
    func bodyStarted(_ connection: ServerConnection) {
        guard var exchange = connection.http else { return }
        var pace = BodyPace(deadlineSeconds: config.bodyDeadlineSeconds, minimumBytesPerSecond: config.minimumBodyBytesPerSecond,
                            windowSeconds: config.bodyRateWindowSeconds, now: Self.monotonicSeconds())
        if case .checkAgain(let seconds) = pace.check(now: pace.startedAt, bytes: 0) { LWS.setTimer(connection.wsi, seconds: seconds) }
        exchange.pace = pace
        connection.http = exchange
    }

    /// LWS_CALLBACK_TIMER: judges the body being read, if any (a timer left from an earlier request
    /// of a keep-alive connection finds none and does nothing).
    func httpTimerFired(_ wsi: OpaquePointer) {
        guard let id = knownID(wsi), let connection = connections[id], var exchange = connection.http else { return }
        if case .awaitingResponse = exchange.state {
            // The handler's answer, if it ever comes, finds the exchange answered and is dropped.
            logger.warning("http handler did not answer in time", metadata: [
                "connection": "\(ConnectionID(rawValue: id))", "path": "\(exchange.request.path)", "seconds": "\(config.responseDeadlineSeconds)"])
            exchange.closeAfter = true
            exchange.state = .sendingHeaders(.json(status: 503,
                #"{"error":{"code":"response_timeout","message":"the server did not answer within \#(config.responseDeadlineSeconds) s; try again later"}}"#,
                headers: [("Retry-After", "5")]))
            connection.http = exchange
            LWS.requestWriteable(wsi)
            return
        }
        guard case .readingBody = exchange.state, var pace = exchange.pace else { return }
        switch pace.check(now: Self.monotonicSeconds(), bytes: exchange.request.body.count) {
        case .checkAgain(let seconds):
            exchange.pace = pace
            connection.http = exchange
            LWS.setTimer(wsi, seconds: seconds)
        case .tooSlow(let reason):
            logger.debug("http body too slow", metadata: ["connection": "\(ConnectionID(rawValue: id))", "reason": "\(reason)"])
            // The rest of the body is never read, so the connection cannot carry another request.
            exchange.closeAfter = true
            exchange.request.body = []
            exchange.pace = nil
            exchange.state = .sendingHeaders(.json(status: 408, #"{"error":{"code":"request_timeout","message":"\#(reason)"}}"#))
            connection.http = exchange
            LWS.requestWriteable(wsi)
        }
    }

    /// The body is complete or refused: no more timer for it.
    func bodyEnded(_ connection: ServerConnection) {
        guard connection.http?.pace != nil else { return }
        connection.http?.pace = nil
        LWS.cancelTimer(connection.wsi)
    }
}
