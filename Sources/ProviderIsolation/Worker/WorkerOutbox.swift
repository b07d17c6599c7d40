import Foundation
import Synchronization

/// The worker's replies on their way to the server. Any thread sends; whichever thread finds no write
/// in progress writes, and keeps writing what other threads queued meanwhile before it leaves, so
/// replies that finish together go out in one system call and no thread is woken just to write. The
/// socket is blocking on this side (the server always reads). If the server is gone the write fails and
/// the worker ends at once.
final class WorkerOutbox: Sendable {
    private let descriptor: Int32
    private let state = Mutex(State())

    private struct State {
        var pending: [UInt8] = []
        var writing = false
    }

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    func send(_ reply: WorkerReply) {
        let frame = reply.encoded()
        var batch = state.withLock { state -> [UInt8]? in
            state.pending.append(contentsOf: frame)
            guard !state.writing else { return nil }
            state.writing = true
            return take(&state.pending)
        }
        while let bytes = batch {
            let written = bytes.withUnsafeBytes { raw in (try? Syscall.writeAll(descriptor, raw)) != nil }
            // The server closed its end: nobody is left to serve.
            if !written { _exit(0) }
            batch = state.withLock { state -> [UInt8]? in
                guard !state.pending.isEmpty else {
                    state.writing = false
                    return nil
                }
                return take(&state.pending)
            }
        }
    }

    private func take(_ bytes: inout [UInt8]) -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }
}
