#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// The server's one thread for every worker socket: reads replies and hands them to their
/// `WorkerConnection`, finishes writes the sending threads could not, sees a worker's socket close the
/// moment the worker dies, and spawns workers (see `spawn`).
///
/// Sending threads never block on a worker: they write what the socket takes and leave the rest to
/// this thread (`WorkerConnection.send`). Changes to the set of sockets and new write interest reach
/// the thread through a wake-up pipe.
final class WorkerIOLoop: @unchecked Sendable {
    private let wake: (read: Int32, write: Int32)
    private let commands = Mutex<[Command]>([])
    private var thread: Thread?
    // Loop thread only.
    private var connections: [Int32: WorkerConnection] = [:]
    private var running = true

    private enum Command: Sendable {
        case add(WorkerConnection)
        case remove(WorkerConnection)
        case run(@Sendable () -> Void)
        case stop
    }

    init() throws(SystemCallError) {
        wake = try Syscall.wakePipe()
        let thread = Thread { [self] in loop() }
        thread.name = "speakersync.worker-io"
        thread.stackSize = 1 << 20
        self.thread = thread
        thread.start()
    }

    /// Starts reading `connection`'s socket.
    func add(_ connection: WorkerConnection) { enqueue(.add(connection)) }

    /// Stops watching the connection's socket and closes it, on the loop thread (so its descriptor
    /// number cannot be reused by a new socket while the loop still polls it).
    func remove(_ connection: WorkerConnection) { enqueue(.remove(connection)) }

    /// A connection has bytes this thread must write.
    func wantsWrite() { poke() }

    /// Runs `body` on the loop thread and returns its result. Workers are spawned here: the kernel's
    /// parent-death signal fires when the spawning *thread* ends, and this thread lives as long as the
    /// host, where a dispatch thread would retire while the worker runs.
    func runOnLoop<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        let box = ResultBox<T>()
        enqueue(.run {
            box.result = Result { try body() }
            box.done.signal()
        })
        box.done.wait()
        return try box.result!.get()
    }

    /// Ends the thread; connections still registered are not closed by it.
    func stop() {
        enqueue(.stop)
    }

    private func enqueue(_ command: Command) {
        commands.withLock { $0.append(command) }
        poke()
    }

    private func poke() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)   // a full pipe already means "wake up"
    }

    private func loop() {
        var fds: [pollfd] = []
        var order: [WorkerConnection] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        defer { buffer.deallocate() }
        while running {
            fds.removeAll(keepingCapacity: true)
            order.removeAll(keepingCapacity: true)
            fds.append(pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0))
            for connection in connections.values {
                var events = Int16(POLLIN)
                if connection.hasPendingWrites { events |= Int16(POLLOUT) }
                fds.append(pollfd(fd: connection.descriptor, events: events, revents: 0))
                order.append(connection)
            }
            guard (try? Syscall.poll(&fds, timeoutMilliseconds: -1)) != nil else { continue }
            if fds[0].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 256)
                while read(wake.read, &sink, sink.count) > 0 {}
                runCommands()
            }
            for (index, connection) in order.enumerated() {
                let revents = fds[index + 1].revents
                guard revents != 0, connections[connection.descriptor] === connection else { continue }
                if revents & Int16(POLLOUT) != 0 { connection.flush() }
                if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                    if !connection.readAvailable(into: buffer) {
                        connections[connection.descriptor] = nil
                        connection.closeDescriptor()
                        connection.peerClosed()
                    }
                }
            }
        }
        Syscall.close(wake.read)
        Syscall.close(wake.write)
    }

    private func runCommands() {
        let pending = commands.withLock { commands -> [Command] in
            defer { commands.removeAll() }
            return commands
        }
        for command in pending {
            switch command {
            case .add(let connection): connections[connection.descriptor] = connection
            case .remove(let connection):
                if connections[connection.descriptor] === connection { connections[connection.descriptor] = nil }
                connection.closeDescriptor()
            case .run(let body): body()
            case .stop: running = false
            }
        }
    }
}

/// A result handed from the loop thread to a waiting thread; the semaphore orders the accesses.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
    let done = DispatchSemaphore(value: 0)
}
