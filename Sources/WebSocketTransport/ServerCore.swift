import CLibWebSockets
import Logging

/// Work other threads hand to the server's service thread (sends and closes go through outboxes).
enum ServerCommand: Sendable {
    case setReceiving(UInt64, enabled: Bool)
    /// Drop the connection if it is still open after `seconds` (a close frame that cannot be written).
    case closeWithin(UInt64, seconds: Int32)
    case httpResponse(UInt64, serial: UInt64, HTTPResponse)
}

/// The C callback of the server protocol: finds the `ServerCore` through `lws_context_user`.
private let serverCallback: LWS.Callback = { wsi, reason, user, input, length in
    guard let wsi, let core = LWS.contextUser(wsi) else {
        return LWS.defaultCallback(wsi, reason, user, input, length)
    }
    return Unmanaged<ServerCore>.fromOpaque(core).takeUnretainedValue()
        .handle(wsi, reason: reason, user: user, input: input, length: length)
}

/// One HTTP request/response on a connection (several per connection with keep-alive).
struct HTTPExchange {
    enum State {
        case readingBody
        case awaitingResponse
        case sendingHeaders(HTTPResponse)
        case sendingBody(HTTPResponse, offset: Int)
    }

    var serial: UInt64
    var request: HTTPRequest
    var state: State
    /// Set for 413 and 408: the unread rest of the body makes the connection unusable afterwards.
    var closeAfter = false
    /// How fast the body arrives, while it is being read (ServerCore+BodyPace).
    var pace: BodyPace?
}

/// The server's service-thread logic. Everything but `runtime` is touched only on the service thread
/// (inside lws callbacks), hence `@unchecked Sendable`.
final class ServerCore: @unchecked Sendable {
    /// How long a close to a client that reads nothing may wait to be written before the socket is dropped.
    static let unreadCloseSeconds: Int32 = 3

    /// HTTP body bytes handed to lws per HTTP_WRITEABLE callback.
    static let httpChunkBytes = 64 * 1024

    let config: WebSocketServerConfig
    let webSocketHandler: any WebSocketHandler
    let httpHandler: (any HTTPHandler)?
    let logger: Logger
    /// Set once right after the context exists; callbacks before that (protocol init) ignore it.
    private(set) var runtime: ServiceRuntime<ServerCommand>!
    private(set) var port = 0

    /// Service-thread state; internal so the closing-handshake extension (ServerCore+Closing) shares it.
    var connections: [UInt64: ServerConnection] = [:]
    /// False once the frame-mask bit could not be read reliably (`LWS.receivedFrameMasking`).
    var maskCheckTrusted = true
    private var lastID: UInt64 = 0
    /// Per-address connections and per-credential requests in flight (ServerCore+Shares.swift).
    var shares: ConnectionShares
    let scratch = WebSocketWriter.makeScratch()

    init(config: WebSocketServerConfig, webSocketHandler: any WebSocketHandler, httpHandler: (any HTTPHandler)?, logger: Logger) {
        self.config = config
        self.shares = ConnectionShares(maxConnectionsPerAddress: config.maxConnectionsPerAddress,
                                       maxRequestsInFlightPerCredential: config.maxRequestsInFlightPerCredential)
        self.webSocketHandler = webSocketHandler
        self.httpHandler = httpHandler
        self.logger = logger
    }

    /// Creates the context bound to `config.host:config.port` with this core as its user pointer.
    func createContext() throws {
        let iface = config.host == "0.0.0.0" ? nil : config.host
        let context = try LWSContext(port: config.port, iface: iface, tls: config.tls.map(ContextTLS.server), callback: serverCallback,
                                     rxBufferBytes: 64 * 1024, user: Unmanaged.passUnretained(self).toOpaque(),
                                     extraProtocols: config.extraSubprotocols,
                                     timeouts: (config.handshakeTimeoutSeconds, config.keepAliveTimeoutSeconds))
        runtime = ServiceRuntime(context: context)
        port = try LWS.listenPort(context.pointer)
    }

    deinit { scratch.deallocate() }

    // MARK: Callback dispatch (service thread)

    fileprivate func handle(_ wsi: OpaquePointer, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
                            input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        guard runtime != nil else { return LWS.defaultCallback(wsi, reason, user, input, length) }
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drain()
            return 0

        // WebSocket
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi, sendStatus: true)
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            // Normally already checked in CONFIRM_UPGRADE; this is the safety net.
            if let id = knownID(wsi), connections[id]?.upgrade != nil { return 0 }
            return confirmUpgrade(wsi, sendStatus: false) == 0 ? 0 : 1
        case LWS_CALLBACK_ESTABLISHED:
            webSocketEstablished(wsi)
            return 0
        case LWS_CALLBACK_RECEIVE:
            return webSocketReceived(wsi, input: input, length: length)
        case LWS_CALLBACK_RECEIVE_PONG:
            return pongReceived(wsi)
        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let id = knownID(wsi), let connection = connections[id] else { return 0 }
            return webSocketWriteable(connection)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            return peerInitiatedClose(wsi, input: input, length: length)
        case LWS_CALLBACK_WS_SERVER_DROP_PROTOCOL:
            webSocketDropping(wsi)
            return LWS.defaultCallback(wsi, reason, user, input, length)
        case LWS_CALLBACK_CLOSED:
            connectionGone(wsi)
            return 0

        // HTTP
        case LWS_CALLBACK_HTTP:
            httpRequestStarted(wsi, input: input)
            return 0
        case LWS_CALLBACK_HTTP_BODY:
            httpBody(wsi, input: input, length: length)
            return 0
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            if let id = knownID(wsi), let connection = connections[id], case .readingBody? = connection.http?.state {
                dispatchHTTP(connection)
            }
            return 0
        case LWS_CALLBACK_TIMER:
            httpTimerFired(wsi)
            return 0
        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let id = knownID(wsi), let connection = connections[id] else { return 0 }
            return writeHTTP(connection)
        case LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_WSI_DESTROY:
            connectionGone(wsi)
            return LWS.defaultCallback(wsi, reason, user, input, length)

        default:
            return LWS.defaultCallback(wsi, reason, user, input, length)
        }
    }

    func knownID(_ wsi: OpaquePointer) -> UInt64? {
        let id = LWS.connectionID(wsi)
        return id == 0 ? nil : id
    }

    /// Why `wsi` may not become a connection (it has none yet): the server's limit, or its address's share.
    private func connectionRefusal(_ wsi: OpaquePointer) -> (status: Int, code: String, message: String, retryAfter: Int)? {
        guard knownID(wsi).flatMap({ connections[$0] }) == nil else { return nil }
        if connections.count >= config.maxConnections {
            logger.debug("connection limit reached", metadata: ["limit": "\(config.maxConnections)"])
            return (503, "server_busy", Self.serverBusyMessage, Self.serverBusyRetrySeconds)
        }
        if shares.addressIsFull(LWS.peerAddress(wsi)) {
            return (429, "too_many_connections", Self.addressFullMessage(config.maxConnectionsPerAddress), Self.serverBusyRetrySeconds)
        }
        return nil
    }

    static let serverBusyMessage = "the server has reached its connection limit; retry later"
    static let serverBusyRetrySeconds = 5

    private func connection(for wsi: OpaquePointer) -> ServerConnection {
        if let id = knownID(wsi), let existing = connections[id] { return existing }
        lastID += 1
        LWS.setConnectionID(wsi, lastID)
        let connection = ServerConnection(id: lastID, wsi: wsi, maxMessageBytes: config.maxMessageBytes)
        connection.address = LWS.peerAddress(wsi)
        shares.connectionOpened(from: connection.address)
        connections[lastID] = connection
        return connection
    }

    /// Applies queued commands and asks for WRITEABLE callbacks where outboxes got new items.
    private func drain() {
        let (commands, dirty) = runtime.takeWork()
        for id in dirty {
            if let connection = connections[id], connection.isWebSocket, connection.isOpen { LWS.requestWriteable(connection.wsi) }
        }
        for command in commands {
            switch command {
            case .closeWithin(let id, let seconds):
                guard let connection = connections[id] else { continue }
                LWS.closeWithin(connection.wsi, seconds: seconds)
            case .setReceiving(let id, let enabled):
                guard let connection = connections[id], connection.isWebSocket else { continue }
                do { try LWS.setReceiving(connection.wsi, enabled: enabled) } catch {
                    logger.warning("rx flow control failed", metadata: ["connection": "\(ConnectionID(rawValue: id))", "error": "\(error)"])
                }
            case .httpResponse(let id, let serial, let response):
                guard let connection = connections[id], var exchange = connection.http, exchange.serial == serial,
                      case .awaitingResponse = exchange.state else { continue } // closed meanwhile, or answered twice
                LWS.cancelTimer(connection.wsi)
                exchange.state = .sendingHeaders(response)
                connection.http = exchange
                LWS.requestWriteable(connection.wsi)
            }
        }
    }

    // MARK: WebSocket

    /// Accepts the upgrade only on `webSocketPath`, within the connection limit, and when the handler
    /// admits it; otherwise answers the refusal as JSON (or, from the safety net, just refuses).
    private func confirmUpgrade(_ wsi: OpaquePointer, sendStatus: Bool) -> Int32 {
        func refuse(_ status: Int, _ code: String, _ message: String, retryAfter: Int?) -> Int32 {
            logger.debug("websocket upgrade refused", metadata: ["status": "\(status)", "code": "\(code)", "reason": "\(message)"])
            guard sendStatus else { return -1 }
            let response = RefusedUpgradeResponse(status: status, code: code, message: message, retryAfterSeconds: retryAfter)
            do {
                try LWS.refuseUpgrade(wsi, status: response.status, reasonPhrase: response.reasonPhrase, contentType: "application/json",
                                      headers: response.headers, body: response.body)
            } catch {
                logger.warning("websocket refusal not written; closing", metadata: ["status": "\(status)", "error": "\(error)"])
                return -1
            }
            return 1
        }
        // A target lws cut short or split is refused before its path is looked at: what is left of it
        // may be exactly `webSocketPath` (RequestTarget).
        let target = LWS.requestTarget(wsi)
        if let message = target?.refusalMessage {
            return refuse(400, "invalid_text", message, retryAfter: nil)
        }
        let path = target.map { String(decoding: $0.path, as: UTF8.self) } ?? ""
        guard path == config.webSocketPath else {
            return refuse(404, "not_found", "no WebSocket endpoint at this path; use \(config.webSocketPath)", retryAfter: nil)
        }
        if let refusal = connectionRefusal(wsi) {
            return refuse(refusal.status, refusal.code, refusal.message, retryAfter: refusal.retryAfter)
        }
        let connection = connection(for: wsi)
        let query = QueryString.parse(bytePairs: target?.queryPairs ?? [])
        let request = UpgradeRequest(path: path, query: query.values, remoteAddress: LWS.peerAddress(wsi), headers: LWS.headers(wsi),
                                     invalidTextParameters: query.invalidText)
        switch webSocketHandler.admit(ConnectionID(rawValue: connection.id), request: request) {
        case .accept:
            connection.upgrade = request
            return 0
        case .refuse(let status, let code, let message, let retryAfter):
            return refuse(status, code, message, retryAfter: retryAfter)
        }
    }

    private func webSocketEstablished(_ wsi: OpaquePointer) {
        let connection = connection(for: wsi)
        connection.isWebSocket = true
        connection.http = nil
        runtime.openOutbox(connection.id)
        let request = connection.upgrade ?? UpgradeRequest(path: config.webSocketPath, query: [:], remoteAddress: LWS.peerAddress(wsi))
        webSocketHandler.opened(ConnectionID(rawValue: connection.id), request: request)
    }

    /// A piece of a data frame. Frames that arrive after the closing handshake began are ignored
    /// (RFC 6455 §5.5.1); an unmasked frame fails the connection (§5.1).
    private func webSocketReceived(_ wsi: OpaquePointer, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        guard let id = knownID(wsi), let connection = connections[id], connection.isOpen else { return 0 }
        if receivedFrameIsUnmasked(wsi) { return failConnection(connection, reason: "unmasked frame") }
        let chunk = UnsafeRawBufferPointer(start: length > 0 ? input : nil, count: length)
        let event = connection.assembler.append(chunk, isBinary: LWS.frameIsBinary(wsi), isFinal: LWS.isFinalFragment(wsi),
                                                remainingInFrame: LWS.remainingPayload(wsi))
        switch event {
        case .message(let message)?:
            webSocketHandler.received(ConnectionID(rawValue: id), message: message)
        case .tooLarge(let byteCount, let limit)?:
            webSocketHandler.rejected(ConnectionID(rawValue: id), reason: .messageTooLarge(byteCount: byteCount, limit: limit))
        case nil:
            break
        }
        return 0
    }

    /// CLOSED, CLOSED_HTTP or WSI_DESTROY: forget the connection, tell the handler once.
    private func connectionGone(_ wsi: OpaquePointer) {
        guard let id = knownID(wsi), let connection = connections.removeValue(forKey: id) else { return }
        shares.connectionClosed(from: connection.address)
        requestLeftFlight(connection)
        guard connection.isWebSocket else { return }
        runtime.removeOutbox(id)
        webSocketHandler.closed(ConnectionID(rawValue: id), code: connection.peerCloseCode)
    }

    // MARK: HTTP

    private func httpRequestStarted(_ wsi: OpaquePointer, input: UnsafeMutableRawPointer?) {
        let limitRefusal = connectionRefusal(wsi)
        let connection = connection(for: wsi)
        connection.httpSerial += 1
        let method = LWS.httpMethod(wsi) ?? "GET"
        let target = LWS.requestTarget(wsi)
        let pathBytes = target?.path ?? input.map { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0.assumingMemoryBound(to: CChar.self)))) } ?? Array("/".utf8)
        let query = QueryString.parse(bytePairs: target?.queryPairs ?? [])
        var invalidText = query.invalidText
        if QueryString.storableText(pathBytes) == nil { invalidText.append("path") }
        let request = HTTPRequest(method: method, path: String(decoding: pathBytes.filter { $0 != 0 }, as: UTF8.self), query: query.values,
                                  headers: LWS.headers(wsi), invalidTextParameters: invalidText, remoteAddress: LWS.peerAddress(wsi))
        var exchange = HTTPExchange(serial: connection.httpSerial, request: request, state: .readingBody)
        let announced = LWS.contentLength(wsi) ?? 0
        // Refusals answer before the body is read, so an unauthenticated client cannot make the server
        // buffer a body; the unread body makes the connection unusable, so it closes after the answer.
        // A target lws cut short or split never reaches the handler, which would act on what is left of
        // it; its request line's end was read as headers, so nothing after it on the connection is trusted.
        let targetRefusal = target?.refusalMessage.map(Self.invalidTarget)
        let refused = limitRefusal.map { Self.refusal($0) } ?? targetRefusal ?? httpHandler?.admit(request) ?? inFlightRefusal(request)
        if let refusal = refused {
            exchange.closeAfter = limitRefusal != nil || targetRefusal != nil || announced > 0
            exchange.state = .sendingHeaders(refusal)
            connection.http = exchange
            LWS.requestWriteable(wsi)
        } else if announced > config.maxHTTPBodyBytes {
            exchange.closeAfter = true
            exchange.state = .sendingHeaders(Self.tooLarge(limit: config.maxHTTPBodyBytes))
            connection.http = exchange
            LWS.requestWriteable(wsi)
        } else if announced > 0 {
            requestEnteredFlight(connection, request: request)
            exchange.request.body.reserveCapacity(announced)
            connection.http = exchange // lws now delivers HTTP_BODY, then HTTP_BODY_COMPLETION
            bodyStarted(connection)
        } else {
            requestEnteredFlight(connection, request: request)
            connection.http = exchange
            dispatchHTTP(connection)
        }
    }

    private func httpBody(_ wsi: OpaquePointer, input: UnsafeMutableRawPointer?, length: Int) {
        guard let id = knownID(wsi), let connection = connections[id], var exchange = connection.http,
              case .readingBody = exchange.state else { return }
        if exchange.request.body.count + length > config.maxHTTPBodyBytes {
            bodyEnded(connection)
            exchange.pace = nil
            exchange.closeAfter = true
            exchange.request.body = []
            exchange.state = .sendingHeaders(Self.tooLarge(limit: config.maxHTTPBodyBytes))
            connection.http = exchange
            LWS.requestWriteable(wsi)
            return
        }
        if let input, length > 0 {
            exchange.request.body.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
        connection.http = exchange
    }

    /// The HTTP API's 400 `invalid_text` for a refused request target, worded as an upgrade's refusal.
    private static func invalidTarget(_ message: String) -> HTTPResponse {
        .json(status: 400, RefusedUpgradeResponse(status: 400, code: "invalid_text", message: message, retryAfterSeconds: nil).body)
    }

    private static func tooLarge(limit: Int) -> HTTPResponse {
        .json(status: 413, #"{"error":{"code":"body_too_large","message":"request body exceeds \#(limit) bytes"}}"#)
    }

    /// Hands the complete request to the handler; its `respond` comes back through the queue.
    private func dispatchHTTP(_ connection: ServerConnection) {
        bodyEnded(connection)
        guard var exchange = connection.http else { return }
        // lws's own timeout on a connection holding headers (timeout_secs_ah_idle) would drop the
        // socket without a response if the handler took longer; ours answers instead (ServerCore+BodyPace).
        LWS.clearPendingTimeout(connection.wsi)
        LWS.setTimer(connection.wsi, seconds: Double(config.responseDeadlineSeconds))
        exchange.state = .awaitingResponse
        let request = exchange.request
        exchange.request.body = []
        connection.http = exchange
        let id = connection.id
        let serial = exchange.serial
        let respond: @Sendable (HTTPResponse) -> Void = { [weak runtime] response in
            runtime?.enqueue(.httpResponse(id, serial: serial, response))
        }
        if let httpHandler {
            httpHandler.handle(request, respond: respond)
        } else {
            respond(.notFound)
        }
    }

    static let hstsHeader = "Strict-Transport-Security"
    static let hstsValue = "max-age=63072000"

    /// One HTTP_WRITEABLE: the headers, or the next body chunk; then keep-alive or close.
    private func writeHTTP(_ connection: ServerConnection) -> Int32 {
        guard var exchange = connection.http else { return 0 }
        let isHead = exchange.request.method == "HEAD"
        do {
            switch exchange.state {
            case .sendingHeaders(let response):
                // Over TLS every answer tells browsers to use nothing else (HSTS, two years, Mozilla's value).
                let headers = config.tls == nil ? response.headers : response.headers + [(Self.hstsHeader, Self.hstsValue)]
                var headerBuffer = [UInt8](repeating: 0, count: LWS.pre + 2048 + response.contentType.utf8.count
                    + headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 8 })
                try headerBuffer.withUnsafeMutableBufferPointer { buffer in
                    try LWS.writeHTTPHeaders(connection.wsi, status: response.status, contentType: response.contentType,
                                             contentLength: response.body.count, extraHeaders: headers,
                                             closeConnection: exchange.closeAfter, scratch: buffer)
                }
                if response.body.isEmpty || isHead { return finishHTTP(connection, closeAfter: exchange.closeAfter) }
                exchange.state = .sendingBody(response, offset: 0)
                connection.http = exchange
                LWS.requestWriteable(connection.wsi)
                return 0
            case .sendingBody(let response, let offset):
                let end = min(response.body.count, offset + Self.httpChunkBytes)
                let payload = scratch.baseAddress! + LWS.pre
                response.body.withUnsafeBufferPointer { source in
                    payload.update(from: source.baseAddress! + offset, count: end - offset)
                }
                let isLast = end == response.body.count
                try LWS.writeHTTPBody(connection.wsi, payload: payload, count: end - offset, isLast: isLast)
                if isLast { return finishHTTP(connection, closeAfter: exchange.closeAfter) }
                exchange.state = .sendingBody(response, offset: end)
                connection.http = exchange
                LWS.requestWriteable(connection.wsi)
                return 0
            case .readingBody, .awaitingResponse:
                return 0
            }
        } catch {
            logger.warning("http write failed; closing", metadata: ["connection": "\(ConnectionID(rawValue: connection.id))", "error": "\(error)"])
            return -1
        }
    }

    /// Keep-alive policy: lws decides from the request (HTTP/1.1 keeps the connection unless the client
    /// said `Connection: close`; HTTP/1.0 closes unless it asked for keep-alive). 413 always closes.
    private func finishHTTP(_ connection: ServerConnection, closeAfter: Bool) -> Int32 {
        connection.http = nil
        requestLeftFlight(connection)
        if closeAfter { return -1 }
        return LWS.completeHTTPTransaction(connection.wsi) ? -1 : 0
    }
}
