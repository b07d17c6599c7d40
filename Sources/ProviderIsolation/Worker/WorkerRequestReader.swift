#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging

/// The worker's end of its socket: each `readOnce` makes one read and hands on every whole request
/// it completed, decoded. The socket's end (the server closed it, or died) ends the worker (exit 0);
/// a frame that does not decode ends it too (exit 3): the two sides are not the same build.
///
/// Not Sendable: one thread reads at a time (the worker's main thread while it loads, then the
/// executor's threads in turn).
final class WorkerRequestReader {
    private let descriptor: Int32
    private var frames = FrameBuffer()
    private let chunk: UnsafeMutableRawBufferPointer
    private let logger: Logger

    init(descriptor: Int32, chunkBytes: Int, logger: Logger) {
        self.descriptor = descriptor
        self.logger = logger
        chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkBytes, alignment: 16)
    }

    deinit { chunk.deallocate() }

    /// `body` may throw to refuse a request; that ends the worker as an unreadable frame does.
    func readOnce(_ body: (WorkerRequest) throws -> Void) {
        let count: Int
        do {
            guard let read = try Syscall.readSome(descriptor, into: chunk), read > 0 else { _exit(0) }
            count = read
        } catch {
            _exit(0)
        }
        frames.append(UnsafeRawBufferPointer(rebasing: chunk[0 ..< count]))
        do {
            try frames.drain { payload in try body(try WorkerRequest.decode(payload)) }
        } catch {
            logger.critical("unreadable request from the server; the worker stops", metadata: ["error": "\(error)"])
            Thread.sleep(forTimeInterval: 0.2)
            _exit(3)
        }
    }
}
