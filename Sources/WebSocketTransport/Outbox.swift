/// Messages waiting to be written to one WebSocket connection, FIFO. Lives inside the transport's
/// mutex-protected shared state: any thread appends, the service thread takes from the front in its
/// WRITEABLE callback.
struct Outbox {
    enum Item {
        case message(bytes: [UInt8], isBinary: Bool)
        case close(code: UInt16, reason: String)
    }

    private var items: [Item] = []
    private var head = 0
    /// Payload bytes not yet handed to lws (including the unsent rest of a message being fragmented).
    var queuedBytes = 0
    /// Set once a close is queued; later sends are dropped because they could never be delivered.
    private(set) var isClosing = false

    var isEmpty: Bool { head == items.count }

    mutating func append(_ message: WebSocketMessage) -> Bool {
        guard !isClosing else { return false }
        switch message {
        case .text(let text): items.append(.message(bytes: Array(text.utf8), isBinary: false))
        case .binary(let bytes): items.append(.message(bytes: bytes, isBinary: true))
        }
        queuedBytes += message.byteCount
        return true
    }

    mutating func appendClose(code: UInt16, reason: String) -> Bool {
        guard !isClosing else { return false }
        isClosing = true
        items.append(.close(code: code, reason: reason))
        return true
    }

    /// The connection's closing handshake has begun without a queued close (the transport failed the
    /// connection, or the peer closed): nothing queued or sent later can ever be written after the
    /// close frame (RFC 6455 §5.5.1), so all of it is dropped and later appends refused.
    mutating func closeDiscarding() {
        items.removeAll()
        head = 0
        queuedBytes = 0
        isClosing = true
    }

    /// Drops everything queued; the bytes of a message already being written stay counted until written.
    mutating func discardAll() {
        for item in items[head...] {
            if case .message(let bytes, _) = item { queuedBytes -= bytes.count }
        }
        items.removeAll()
        head = 0
    }

    mutating func popFirst() -> Item? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}

/// The message currently being written in fragments (service-thread only). Big messages go out as
/// several frames so one WRITEABLE callback never hands lws more than `fragmentBytes`.
struct OutgoingFragmenter {
    static let fragmentBytes = 64 * 1024

    let bytes: [UInt8]
    let isBinary: Bool
    private var offset = 0
    private var sentAny = false

    init(bytes: [UInt8], isBinary: Bool) {
        self.bytes = bytes
        self.isBinary = isBinary
    }

    var isDone: Bool { sentAny && offset >= bytes.count }

    /// The next fragment (an empty message is one empty frame); advances past it.
    mutating func next() -> (range: Range<Int>, isFirst: Bool, isLast: Bool) {
        let isFirst = !sentAny
        let end = min(bytes.count, offset + Self.fragmentBytes)
        let range = offset..<end
        offset = end
        sentAny = true
        return (range, isFirst, end == bytes.count)
    }
}
