import Logging

/// The WRITEABLE-callback half of a WebSocket connection, shared by server and client: exactly one
/// `lws_write` per callback, taken from the connection's outbox, fragmenting big messages, and
/// re-requesting a writeable callback while anything is left. A queued close sets the close
/// code/reason and makes the callback return -1, which is how lws sends the close frame.
enum WebSocketWriter {
    /// Scratch buffer with `LWS.pre` headroom for one fragment; allocate once per core.
    static func makeScratch() -> UnsafeMutableBufferPointer<UInt8> {
        UnsafeMutableBufferPointer<UInt8>.allocate(capacity: LWS.pre + OutgoingFragmenter.fragmentBytes)
    }

    /// Handles one WRITEABLE callback; returns the value the lws callback must return.
    static func writeNext<Command>(wsi: OpaquePointer, id: UInt64, current: inout OutgoingFragmenter?,
                                   runtime: ServiceRuntime<Command>, scratch: UnsafeMutableBufferPointer<UInt8>,
                                   logger: Logger) -> Int32 {
        if current == nil {
            switch runtime.popOutgoing(id, writtenBytes: 0, takeNext: true).item {
            case nil:
                return 0
            case .close(let code, let reason):
                LWS.setCloseReason(wsi, code: code, reason: reason)
                return -1
            case .message(let bytes, let isBinary):
                current = OutgoingFragmenter(bytes: bytes, isBinary: isBinary)
            }
        }
        guard var fragmenter = current else { return 0 }
        let piece = fragmenter.next()
        let payload = scratch.baseAddress! + LWS.pre
        fragmenter.bytes.withUnsafeBufferPointer { source in
            if !piece.range.isEmpty {
                payload.update(from: source.baseAddress! + piece.range.lowerBound, count: piece.range.count)
            }
        }
        do {
            try LWS.writeWebSocketFrame(wsi, payload: payload, count: piece.range.count, isBinary: fragmenter.isBinary,
                                        isFirst: piece.isFirst, isLast: piece.isLast)
        } catch {
            logger.warning("websocket write failed; closing", metadata: ["connection": "\(ConnectionID(rawValue: id))", "error": "\(error)"])
            return -1
        }
        current = fragmenter.isDone ? nil : fragmenter
        let more = runtime.popOutgoing(id, writtenBytes: piece.range.count, takeNext: false).moreQueued
        if current != nil || more { LWS.requestWriteable(wsi) }
        return 0
    }
}
