/// One server connection as the service thread sees it (HTTP, or WebSocket after the upgrade).
/// Service-thread only, like the rest of `ServerCore`'s state.
final class ServerConnection {
    let id: UInt64
    let wsi: OpaquePointer
    var upgrade: UpgradeRequest?
    var isWebSocket = false
    var assembler: MessageAssembler
    var outgoing: OutgoingFragmenter?
    var peerCloseCode: UInt16?
    var http: HTTPExchange?
    var httpSerial: UInt64 = 0
    /// The peer's address, counted in `ConnectionShares` while the connection lives.
    var address: String?
    /// The credential whose in-flight request this connection is serving (counted in `ConnectionShares`).
    var inFlightCredential: String?

    // The closing handshake (RFC 6455 §5.5.1, §7.1). lws keeps calling SERVER_WRITEABLE after the
    // server's own close frame, and would write whatever we hand it after that frame; these flags are
    // what keeps the transport silent once a close is on its way.

    /// The server's close frame is written or prepared: ours from the outbox, a fatal close of the
    /// transport (`ServerCore.failConnection`), or lws failing the connection itself.
    var closeSent = false
    /// The peer's close frame arrived; lws answers it at once, so nothing else may follow either.
    var peerClosed = false
    /// A fatal close waiting for lws to flush an earlier partial write (returning -1 before that
    /// would make lws drop the socket without the close frame).
    var deferredClose: (code: UInt16, reason: String)?

    /// Neither side has begun closing: data may still be received and written.
    var isOpen: Bool { !closeSent && !peerClosed }

    init(id: UInt64, wsi: OpaquePointer, maxMessageBytes: Int) {
        self.id = id
        self.wsi = wsi
        self.assembler = MessageAssembler(limit: maxMessageBytes)
    }
}
