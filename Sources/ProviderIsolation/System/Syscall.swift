#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CProviderProcess

/// A failed system call: which one and its errno. Every raw call of this module goes through `Syscall`,
/// which turns a -1 return into this error (the shape of swift-nio's System.swift).
public struct SystemCallError: Error, CustomStringConvertible, Sendable {
    public var call: String
    public var errno: Int32

    public var description: String { "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// The raw calls of process isolation, each retried on EINTR where that is safe and thrown as
/// `SystemCallError` otherwise. Nothing here keeps state; the owning types (`WorkerChannel`,
/// `WorkerProcess`) hold the descriptors and close them.
enum Syscall {
    @discardableResult
    static func check(_ call: String, _ body: () -> Int32) throws(SystemCallError) -> Int32 {
        while true {
            let result = body()
            if result >= 0 { return result }
            let error = errno
            if error == EINTR { continue }
            throw SystemCallError(call: call, errno: error)
        }
    }

    /// A connected pair of stream sockets, both close-on-exec.
    static func socketPair() throws(SystemCallError) -> (Int32, Int32) {
        var fds: [Int32] = [-1, -1]
        #if canImport(Darwin)
        let type = SOCK_STREAM
        #else
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #endif
        try check("socketpair") { socketpair(AF_UNIX, type, 0, &fds) }
        #if canImport(Darwin)
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        #endif
        return (fds[0], fds[1])
    }

    /// A pipe, both ends close-on-exec and non-blocking (the event loop's wake-up channel).
    static func wakePipe() throws(SystemCallError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try check("pipe") { pipe(&fds) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            try setNonBlocking(fd)
        }
        return (fds[0], fds[1])
    }

    static func setNonBlocking(_ fd: Int32) throws(SystemCallError) {
        let flags = try check("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        try check("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Sets the socket's send and receive buffers (best effort: the kernel caps them).
    static func setSocketBuffers(_ fd: Int32, bytes: Int32) {
        var size = bytes
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Writes what it can without blocking; returns the bytes written (0 when the socket is full).
    static func writeSome(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        while true {
            let written = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if written >= 0 { return written }
            let error = errno
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK { return 0 }
            throw SystemCallError(call: "send", errno: error)
        }
    }

    /// Writes every byte, blocking as needed (the worker's side, where blocking is fine).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let written = send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(call: "send", errno: errno)
            }
            offset += written
        }
    }

    /// Reads up to `capacity` bytes. nil: would block (non-blocking socket); 0: end of stream.
    static func readSome(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int? {
        while true {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            let error = errno
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK { return nil }
            if error == ECONNRESET { return 0 }
            throw SystemCallError(call: "read", errno: error)
        }
    }

    static func poll(_ fds: inout [pollfd], timeoutMilliseconds: Int32) throws(SystemCallError) -> Int32 {
        let count = nfds_t(fds.count)
        return try check("poll") { fds.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, count, timeoutMilliseconds) } }
    }

    static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// Starts `executable` with `childDescriptor` as its descriptor 3, standard output sent to standard
    /// error (a worker must never write into the server's stdout), no other descriptor of the server
    /// open, in a session of its own: a terminal's Ctrl-C reaches the server only, which then stops its
    /// workers itself, and the kernel's autogroup scheduling weighs the worker as one group
    /// (`lowerPriority`). `environment` is `NAME=value` strings.
    static func spawn(executable: String, arguments: [String], environment: [String], childDescriptor: Int32) throws(SystemCallError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        try check("posix_spawn_file_actions_init") { posix_spawn_file_actions_init(&actions) == 0 ? 0 : -1 }
        defer { posix_spawn_file_actions_destroy(&actions) }
        try check("posix_spawnattr_init") { posix_spawnattr_init(&attributes) == 0 ? 0 : -1 }
        defer { posix_spawnattr_destroy(&attributes) }
        _ = posix_spawn_file_actions_adddup2(&actions, childDescriptor, WorkerChannel.childDescriptor)
        _ = posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO)
        _ = speakersync_spawn_close_from(&actions, WorkerChannel.childDescriptor + 1)
        // No signal blocked in the worker whatever the spawning thread blocks: the provider sandbox
        // signals the worker's threads to change their credentials (speakersync_sandbox_switch_thread).
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        _ = posix_spawnattr_setsigmask(&attributes, &unblocked)
        _ = posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        if speakersync_spawn_new_session(&attributes) != 0 {
            // Without setsid in posix_spawn, at least a process group of its own.
            _ = posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
            _ = posix_spawnattr_setpgroup(&attributes, 0)
        }
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for pointer in envp { free(pointer) } }
        let status = executable.withCString { path in
            posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        }
        guard status == 0 else { throw SystemCallError(call: "posix_spawn \(executable)", errno: status) }
        return pid
    }

    /// Waits for `pid` to end (blocking) and returns its wait status and resource usage.
    static func waitForExit(_ pid: pid_t) throws(SystemCallError) -> (status: Int32, usage: rusage) {
        var status: Int32 = 0
        var usage = rusage()
        try check("wait4") { wait4(pid, &status, 0, &usage) }
        return (status, usage)
    }

    static func kill(_ pid: pid_t, _ signal: Int32) {
        _ = Glibc.kill(pid, signal)
    }

    /// Caps the process's data segment and private writable mappings (RLIMIT_DATA): the heap, anonymous
    /// mappings and thread stacks, not shared libraries or mapped files, so the number is about memory
    /// the provider allocates.
    static func limitData(bytes: UInt64) throws(SystemCallError) {
        var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_DATA.rawValue)
        #else
        let resource = RLIMIT_DATA
        #endif
        try check("setrlimit(RLIMIT_DATA)") { setrlimit(resource, &limit) }
    }

    /// Lowers this process's scheduling priority by `increment` (nice), so the server's latency-bound
    /// threads win the cores when a provider's compute saturates them. Linux's nice is per thread
    /// (threads inherit it from their creator, so call this before starting any), and the kernel
    /// shares the cores per thread: a worker with many busy threads would still outweigh the server.
    /// Where the kernel groups scheduling by session (autogroup; the worker has a session of its own),
    /// the group's nice is set too, which weighs all the worker's threads together.
    static func lowerPriority(by increment: Int32) throws(SystemCallError) {
        guard increment > 0 else { return }
        errno = 0
        let current = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        if current == -1, errno != 0 { throw SystemCallError(call: "getpriority", errno: errno) }
        let nice = min(19, current + increment)
        try check("setpriority") { setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) }
        // Absent (no CONFIG_SCHED_AUTOGROUP) or not applying (the process is in a cgroup of its own):
        // the per-thread nice above is what remains.
        let fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC)
        if fd >= 0 {
            let text = "\(nice)\n"
            _ = text.withCString { write(fd, $0, strlen($0)) }
            Glibc.close(fd)
        }
    }

    static func setParentDeathSignal(_ signal: Int32) throws(SystemCallError) {
        try check("prctl(PR_SET_PDEATHSIG)") { speakersync_set_parent_death_signal(signal) }
    }
}

extension Syscall {
    /// This process's environment as `NAME=value` strings.
    static var currentEnvironment: [String] {
        var result: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            result.append(String(cString: entry))
            cursor += 1
        }
        return result
    }
}
