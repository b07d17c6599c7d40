import CLibWebSockets
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Work other threads hand to the client's service thread.
enum ClientCommand: Sendable {
    case connect(UInt64, WebSocketURL, headers: [(String, String)], any WebSocketClientHandler)
}

private let clientCallback: LWS.Callback = { wsi, reason, user, input, length in
    guard let wsi, let core = LWS.contextUser(wsi) else {
        return LWS.defaultCallback(wsi, reason, user, input, length)
    }
    return Unmanaged<ClientCore>.fromOpaque(core).takeUnretainedValue()
        .handle(wsi, reason: reason, user: user, input: input, length: length)
}

/// One client connection as the service thread sees it.
private final class ClientConnection {
    let id: UInt64
    let handler: any WebSocketClientHandler
    /// C strings lws was given at connect time; freed when the connection is gone.
    var cStrings: [UnsafeMutablePointer<CChar>] = []
    var wsi: OpaquePointer?
    var assembler: MessageAssembler
    var outgoing: OutgoingFragmenter?
    var peerCloseCode: UInt16?
    var peerCloseReason: String?
    /// Extra handshake headers (e.g. `authorization`), added in CLIENT_APPEND_HANDSHAKE_HEADER.
    var headers: [(String, String)] = []
    /// A wss:// connection counted by `TLSHandshakeGate` until it is established or gone.
    private var handshaking = false

    init(id: UInt64, handler: any WebSocketClientHandler, maxMessageBytes: Int) {
        self.id = id
        self.handler = handler
        self.assembler = MessageAssembler(limit: maxMessageBytes)
    }

    func startHandshake() {
        TLSHandshakeGate.handshakeStarted()
        handshaking = true
    }

    func endHandshake() {
        guard handshaking else { return }
        handshaking = false
        TLSHandshakeGate.handshakeEnded()
    }

    deinit {
        endHandshake() // every way a connection ends drops it from `connections`
        cStrings.forEach { free($0) }
    }
}

/// The client's service-thread logic; like `ServerCore`, only `runtime` and `nextID` cross threads.
final class ClientCore: @unchecked Sendable {
    let logger: Logger
    let maxMessageBytes: Int
    /// CA file wss:// servers are verified against; nil: the OS trust store.
    let caFilePath: String?
    /// Whether the context was made with TLS (wss:// connections possible).
    let tls: Bool
    private(set) var runtime: ServiceRuntime<ClientCommand>!
    /// IDs are handed out by `connect` on the caller's thread.
    let nextID = Atomic<UInt64>(0)

    private var connections: [UInt64: ClientConnection] = [:]
    private let scratch = WebSocketWriter.makeScratch()

    init(maxMessageBytes: Int, caFilePath: String?, tls: Bool, logger: Logger) {
        self.tls = tls
        self.maxMessageBytes = maxMessageBytes
        self.caFilePath = caFilePath
        self.logger = logger
    }

    func createContext() throws {
        let context = try LWSContext(port: nil, iface: nil, tls: tls ? .client(caFilePath: caFilePath) : nil, callback: clientCallback,
                                     rxBufferBytes: 64 * 1024,
                                     user: Unmanaged.passUnretained(self).toOpaque())
        runtime = ServiceRuntime(context: context)
    }

    deinit { scratch.deallocate() }

    fileprivate func handle(_ wsi: OpaquePointer, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
                            input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        guard runtime != nil else { return LWS.defaultCallback(wsi, reason, user, input, length) }
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drain()
            return 0
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let message = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
            // lws 4.1.6 words every non-101 answer "HS: ws upgrade response not 101" (401: "…
            // unauthorized"); the response's headers are still attached here, so its status is read
            // from them (0: no response at all, e.g. a refused TCP connection).
            let status = Int(lws_http_client_http_response(wsi))
            if status != 0, status != 101, let connection = connections[LWS.connectionID(wsi)] {
                connection.handler.upgradeRefused(ConnectionID(rawValue: connection.id), UpgradeRefusal(
                    status: status, retryAfter: LWS.header(wsi, WSI_TOKEN_HTTP_RETRY_AFTER), reason: message))
            }
            finish(LWS.connectionID(wsi), code: nil, reason: message)
            return 0
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            guard let connection = connections[LWS.connectionID(wsi)], !connection.headers.isEmpty else { return 0 }
            do {
                try LWS.appendHandshakeHeaders(wsi, connection.headers, cursor: input, remaining: length)
                return 0
            } catch {
                logger.error("cannot add handshake headers", metadata: ["error": "\(error)"])
                return -1
            }
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            guard let connection = connections[LWS.connectionID(wsi)] else { return -1 }
            connection.wsi = wsi
            connection.endHandshake() // certificate verification is over
            connection.handler.connected(ConnectionID(rawValue: connection.id))
            LWS.requestWriteable(wsi) // anything sent before the handshake finished
            return 0
        case LWS_CALLBACK_CLIENT_RECEIVE:
            received(wsi, input: input, length: length)
            return 0
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            guard let connection = connections[LWS.connectionID(wsi)] else { return 0 }
            return WebSocketWriter.writeNext(wsi: wsi, id: connection.id, current: &connection.outgoing, runtime: runtime,
                                             scratch: scratch, logger: logger)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let connection = connections[LWS.connectionID(wsi)] {
                (connection.peerCloseCode, connection.peerCloseReason) = LWS.parseClosePayload(input, length)
            }
            return 0
        case LWS_CALLBACK_CLIENT_CLOSED:
            let connection = connections[LWS.connectionID(wsi)]
            finish(LWS.connectionID(wsi), code: connection?.peerCloseCode, reason: connection?.peerCloseReason)
            return 0
        case LWS_CALLBACK_WSI_DESTROY:
            finish(LWS.connectionID(wsi), code: nil, reason: "connection destroyed")
            return LWS.defaultCallback(wsi, reason, user, input, length)
        default:
            return LWS.defaultCallback(wsi, reason, user, input, length)
        }
    }

    private func drain() {
        let (commands, dirty) = runtime.takeWork()
        for command in commands {
            switch command {
            case .connect(let id, let url, let headers, let handler):
                let connection = ClientConnection(id: id, handler: handler, maxMessageBytes: maxMessageBytes)
                connection.headers = headers
                let host = strdup(url.host)!
                let path = strdup(url.pathAndQuery)!
                // lws also takes the name the server certificate must match from this header (port stripped).
                let hostHeader = strdup(url.port == url.defaultPort ? url.host : "\(url.host):\(url.port)")!
                connection.cStrings = [host, path, hostHeader]
                connections[id] = connection // before connecting: lws may call back synchronously
                guard !url.isSecure || tls else {
                    finish(id, code: nil, reason: "wss:// needs a client made with TLS (a CA file, or tls: true)")
                    continue
                }
                if url.isSecure { connection.startHandshake() }
                do {
                    try LWS.connect(context: runtime.context.pointer, host: host, port: url.port, path: path,
                                    hostHeader: hostHeader, protocolName: runtime.context.protocolNamePointer,
                                    secure: url.isSecure, alpn: runtime.context.alpnPointer, id: id)
                } catch {
                    finish(id, code: nil, reason: "\(error)")
                }
            }
        }
        for id in dirty {
            if let wsi = connections[id]?.wsi { LWS.requestWriteable(wsi) }
        }
    }

    private func received(_ wsi: OpaquePointer, input: UnsafeMutableRawPointer?, length: Int) {
        guard let connection = connections[LWS.connectionID(wsi)] else { return }
        let chunk = UnsafeRawBufferPointer(start: length > 0 ? input : nil, count: length)
        let event = connection.assembler.append(chunk, isBinary: LWS.frameIsBinary(wsi), isFinal: LWS.isFinalFragment(wsi),
                                                remainingInFrame: LWS.remainingPayload(wsi))
        switch event {
        case .message(let message)?:
            connection.handler.received(ConnectionID(rawValue: connection.id), message: message)
        case .tooLarge(let byteCount, let limit)?:
            logger.warning("incoming message too large; closing", metadata: [
                "connection": "\(ConnectionID(rawValue: connection.id))", "bytes": "\(byteCount)", "limit": "\(limit)"])
            runtime.close(connection.id, code: 1009, reason: "message too large")
        case nil:
            break
        }
    }

    /// Reports the end of a connection exactly once.
    private func finish(_ id: UInt64, code: UInt16?, reason: String?) {
        guard id != 0, let connection = connections.removeValue(forKey: id) else { return }
        runtime.removeOutbox(id)
        connection.handler.disconnected(ConnectionID(rawValue: id), code: code, reason: reason)
    }
}
