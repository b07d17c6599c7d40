import Foundation
import Synchronization

/// The server's end of one worker's socket: frames out (from any thread) and replies in (on the I/O
/// loop's thread). Owns the descriptor; the loop closes it (`closeDescriptor`) when the connection is
/// removed or the worker's end closes.
final class WorkerConnection: @unchecked Sendable {
    let descriptor: Int32
    private let loop: WorkerIOLoop
    private let onReply: (WorkerReply) -> Void
    private let onClosed: (_ protocolError: WireError?) -> Void
    private let outbox = Mutex<Outbox>(Outbox())
    // Loop thread only.
    private var frames = FrameBuffer()
    private var protocolError: WireError?

    private struct Outbox {
        var bytes: [UInt8] = []
        var sent = 0
        var closed = false
        var isEmpty: Bool { sent == bytes.count }
    }

    /// `onReply` and `onClosed` run on the loop thread; `onClosed` once, after the worker's end closed
    /// (or sent something unreadable, which ends the connection).
    init(descriptor: Int32, loop: WorkerIOLoop, onReply: @escaping (WorkerReply) -> Void,
         onClosed: @escaping (_ protocolError: WireError?) -> Void) throws(SystemCallError) {
        try Syscall.setNonBlocking(descriptor)
        Syscall.setSocketBuffers(descriptor, bytes: 1 << 20)
        self.descriptor = descriptor
        self.loop = loop
        self.onReply = onReply
        self.onClosed = onClosed
    }

    /// Queues a frame. The calling thread writes what the socket takes at once when nothing is queued
    /// ahead of it (the common case: no thread hop); the loop thread writes the rest when it can.
    func send(_ frame: [UInt8]) {
        let needsLoop = outbox.withLock { box -> Bool in
            guard !box.closed else { return false }
            if box.isEmpty {
                box.bytes.removeAll(keepingCapacity: true)
                box.sent = 0
                let written = frame.withUnsafeBytes { (try? Syscall.writeSome(descriptor, $0)) ?? 0 }
                if written == frame.count { return false }
                box.bytes.append(contentsOf: frame[written...])
                return true
            }
            box.bytes.append(contentsOf: frame)
            return false   // the loop already watches for room
        }
        if needsLoop { loop.wantsWrite() }
    }

    var hasPendingWrites: Bool { outbox.withLock { !$0.isEmpty && !$0.closed } }

    /// Loop thread: the socket has room.
    func flush() {
        outbox.withLock { box in
            guard !box.closed, !box.isEmpty else { return }
            let written = box.bytes.withUnsafeBytes { raw in
                (try? Syscall.writeSome(descriptor, UnsafeRawBufferPointer(rebasing: raw[box.sent...]))) ?? 0
            }
            box.sent += written
            if box.isEmpty {
                box.bytes.removeAll(keepingCapacity: true)
                box.sent = 0
            }
        }
    }

    /// Loop thread: reads what is there and delivers whole frames. False when the connection ended.
    func readAvailable(into buffer: UnsafeMutableRawBufferPointer) -> Bool {
        while true {
            let count: Int?
            do {
                count = try Syscall.readSome(descriptor, into: buffer)
            } catch {
                return false
            }
            guard let count else { return true }       // drained
            guard count > 0 else { return false }      // end of stream: the worker is gone
            frames.append(UnsafeRawBufferPointer(rebasing: buffer[0 ..< count]))
            do {
                try frames.drain { payload in onReply(try WorkerReply.decode(payload)) }
            } catch {
                protocolError = error as? WireError ?? WireError("\(error)")
                return false
            }
            if count < buffer.count { return true }
        }
    }

    /// Loop thread, once.
    func peerClosed() {
        onClosed(protocolError)
    }

    /// Loop thread: no more writes; the descriptor is closed.
    func closeDescriptor() {
        let wasOpen = outbox.withLock { box -> Bool in
            defer { box.closed = true }
            return !box.closed
        }
        if wasOpen { Syscall.close(descriptor) }
    }

    /// Any thread: stop the connection (the worker sees end of stream and exits).
    func close() {
        loop.remove(self)
    }
}
