import CLibWebSockets

/// The server's side of the closing handshake and of the framing rules lws 4.1.6 leaves to the
/// application (RFC 6455 §5.1, §5.5.1, §7.4). Service thread only.
///
/// What lws does itself: it fails a connection with a close frame (1002) for reserved bits, reserved
/// opcodes, fragmented control frames and continuations without a start, with 1007 for text that is
/// not UTF-8 (`LWS_SERVER_OPTION_VALIDATE_UTF8`), and it answers invalid close codes below 3000 with
/// 1002. What it does not, and this adds: refusing unmasked client frames; answering a 1-byte close
/// payload, codes of 5000 and above, and the other malformed frames it only drops TCP for (a control
/// frame over 125 bytes, a 64-bit length with the top bit set, a close reason that is not UTF-8) with
/// a close frame 1002; and writing nothing at all after the server's close frame.
extension ServerCore {
    /// One SERVER_WRITEABLE: the next queued item, unless the closing handshake has begun.
    func webSocketWriteable(_ connection: ServerConnection) -> Int32 {
        guard connection.isOpen else {
            guard let close = connection.deferredClose else { return 0 } // nothing after a close frame
            guard !LWS.hasPendingOutput(connection.wsi) else {
                LWS.requestWriteable(connection.wsi)
                return 0
            }
            connection.deferredClose = nil
            LWS.setCloseReason(connection.wsi, code: close.code, reason: close.reason)
            return -1
        }
        let result = WebSocketWriter.writeNext(wsi: connection.wsi, id: connection.id, current: &connection.outgoing,
                                               runtime: runtime, scratch: scratch, logger: logger)
        // -1: a queued close was handed to lws (or a write failed and lws drops the socket).
        if result != 0 { connection.closeSent = true }
        return result
    }

    /// WS_PEER_INITIATED_CLOSE: lws echoes a valid close (having already turned invalid codes below
    /// 3000 into 1002). A payload that breaks the rules gets our own close 1002 instead of the echo.
    func peerInitiatedClose(_ wsi: OpaquePointer, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        guard let id = knownID(wsi), let connection = connections[id] else { return 0 }
        let alreadyClosing = !connection.isOpen
        connection.peerClosed = true
        runtime.closeOutbox(id)
        // After our own close frame, the peer's close is its answer: lws ends the connection.
        if alreadyClosing { return 0 }
        if receivedFrameIsUnmasked(wsi) { return failConnection(connection, reason: "unmasked frame") }
        let payload = UnsafeRawBufferPointer(start: length > 0 ? input : nil, count: length)
        if let violation = CloseFrameRules.violation(in: payload) { return failConnection(connection, reason: violation) }
        connection.peerCloseCode = LWS.parseClosePayload(input, length).code
        return 0
    }

    /// RECEIVE_PONG (a pong with a payload): only the mask is checked; pongs carry nothing for us.
    func pongReceived(_ wsi: OpaquePointer) -> Int32 {
        guard let id = knownID(wsi), let connection = connections[id], connection.isOpen else { return 0 }
        return receivedFrameIsUnmasked(wsi) ? failConnection(connection, reason: "unmasked frame") : 0
    }

    /// WS_SERVER_DROP_PROTOCOL: lws is closing an established WebSocket. When neither side began a
    /// closing handshake and lws prepared no close frame, lws is failing the connection for a framing
    /// error it only drops TCP for (see the type's comment); a close frame 1002 is set so that lws sends
    /// it instead. Where the socket is already unusable (the peer went away, a timeout, shutdown) lws
    /// skips the write, so the reason set here costs nothing.
    func webSocketDropping(_ wsi: OpaquePointer) {
        guard let id = knownID(wsi), let connection = connections[id], connection.isWebSocket else { return }
        let lwsIsFailingIt = connection.isOpen
        defer {
            connection.closeSent = true
            runtime.closeOutbox(id)
        }
        guard !connection.peerClosed else { return }
        if LWS.preparedCloseLength(wsi) == 0 {
            if let close = connection.deferredClose {
                // Our own fatal close was still waiting for a flush: let lws send that one.
                LWS.setCloseReason(wsi, code: close.code, reason: close.reason)
            } else if lwsIsFailingIt {
                LWS.setCloseReason(wsi, code: CloseFrameRules.protocolError, reason: "protocol error")
            }
        }
        if lwsIsFailingIt { stopReading(connection) }
    }

    /// After a framing error the bytes that follow are garbage, and lws would parse them before it
    /// writes its close frame (see `LWS.stopReceivingForClose`); a second error makes it drop TCP
    /// without the frame. So reading stops; the peer's answer to the close is not needed. Harmless on a
    /// socket that is already gone (lws then changes nothing).
    private func stopReading(_ connection: ServerConnection) {
        LWS.stopReceivingForClose(connection.wsi)
    }

    /// Fails the connection with a close frame (1002 unless told otherwise): everything queued is
    /// dropped, later sends are refused, and received frames are ignored from now on. Returns what the
    /// lws callback must return: -1 makes lws write the close frame now; when an earlier write is still
    /// partly buffered the close waits for the next WRITEABLE instead.
    func failConnection(_ connection: ServerConnection, code: UInt16 = CloseFrameRules.protocolError, reason: String) -> Int32 {
        logger.debug("websocket failed by the server", metadata: ["connection": "\(ConnectionID(rawValue: connection.id))",
                                                                  "code": "\(code)", "reason": "\(reason)"])
        connection.closeSent = true
        runtime.closeOutbox(connection.id)
        stopReading(connection)
        guard !LWS.hasPendingOutput(connection.wsi) else {
            connection.deferredClose = (code, reason)
            LWS.requestWriteable(connection.wsi)
            return 0
        }
        LWS.setCloseReason(connection.wsi, code: code, reason: reason)
        return -1
    }

    /// True when the frame being delivered came without a mask. Once the mask bit cannot be read
    /// reliably (another lws build), the check turns itself off for good and says so once.
    func receivedFrameIsUnmasked(_ wsi: OpaquePointer) -> Bool {
        guard maskCheckTrusted else { return false }
        switch LWS.receivedFrameMasking(wsi) {
        case .masked:
            return false
        case .unmasked:
            return true
        case .unknown:
            maskCheckTrusted = false
            logger.warning("cannot read the WebSocket mask bit from this libwebsockets build; unmasked client frames are no longer refused")
            return false
        }
    }
}
