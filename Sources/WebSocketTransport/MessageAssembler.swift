/// Reassembles WebSocket fragments (and lws's partial deliveries of one big frame) into complete
/// messages and enforces a size limit. Service-thread only; one per connection.
///
/// lws may hand a single frame over in several RECEIVE callbacks, and a message may span several
/// frames, so "message complete" is `lws_is_final_fragment && lws_remaining_packet_payload == 0`.
struct MessageAssembler {
    enum Event: Equatable {
        case message(WebSocketMessage)
        case tooLarge(byteCount: Int, limit: Int)
    }

    let limit: Int
    private var buffer: [UInt8] = []
    private var isBinary = false
    private var inMessage = false
    private var dropping = false

    init(limit: Int) { self.limit = limit }

    /// Feeds one RECEIVE callback's payload.
    /// - Parameters:
    ///   - isBinary: the frame type lws reports (only looked at for the first piece of a message).
    ///   - remainingInFrame: `lws_remaining_packet_payload`, used to end the message and size the rejection.
    ///   - isFinal: `lws_is_final_fragment`.
    mutating func append(_ chunk: UnsafeRawBufferPointer, isBinary frameIsBinary: Bool, isFinal: Bool, remainingInFrame: Int) -> Event? {
        if !inMessage {
            inMessage = true
            isBinary = frameIsBinary
            dropping = false
            buffer.removeAll(keepingCapacity: buffer.capacity <= 256 * 1024)
        }
        let complete = isFinal && remainingInFrame == 0
        defer {
            if complete {
                inMessage = false
                dropping = false
            }
        }
        if dropping { return nil }
        if buffer.count + chunk.count > limit {
            let seen = buffer.count + chunk.count + remainingInFrame
            dropping = !complete
            buffer.removeAll(keepingCapacity: false)
            return .tooLarge(byteCount: seen, limit: limit)
        }
        buffer.append(contentsOf: chunk)
        guard complete else { return nil }
        let bytes = buffer
        buffer.removeAll(keepingCapacity: buffer.capacity <= 256 * 1024)
        return .message(isBinary ? .binary(bytes) : .text(String(decoding: bytes, as: UTF8.self)))
    }
}
