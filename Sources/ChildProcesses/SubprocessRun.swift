import Foundation

extension Subprocess {
    /// What a process run to its end printed, and how it ended.
    public struct Completed: Sendable {
        public var exit: Exit
        public var standardOutput: Data
        public var standardError: Data
        /// True when it was still running at the deadline and was sent `timeoutSignal`.
        public var timedOut: Bool

        public var standardOutputText: String { String(decoding: standardOutput, as: UTF8.self) }
        public var standardErrorText: String { String(decoding: standardError, as: UTF8.self) }
    }

    /// Runs `configuration` to its end: `input` written to its standard input (then closed), its
    /// standard output and error collected (each `.pipe` unless the configuration sends them
    /// elsewhere). Input and both outputs are served together in one poll loop, so a child that
    /// writes much before it reads, or fills one pipe while the other is read, cannot deadlock.
    /// Past `timeoutSeconds` (a bound so that a caller never hangs) it is sent `timeoutSignal`.
    public static func run(_ configuration: Configuration, input: Data? = nil, timeoutSeconds: Double? = nil,
                           timeoutSignal: Int32 = SIGKILL) throws(SubprocessError) -> Completed {
        var configuration = configuration
        if input != nil { configuration.standardInput = .pipe }
        if case .null = configuration.standardOutput { configuration.standardOutput = .pipe }
        if case .null = configuration.standardError { configuration.standardError = .pipe }
        let process = try Subprocess(configuration)
        let deadline = timeoutSeconds.map { ContinuousClock.now + .seconds($0) }
        var output = Data()
        var errors = Data()
        var timedOut = false
        var pending = input.map { [UInt8]($0) } ?? []
        var written = 0
        var inputFD = process.standardInput?.fileDescriptor
        if inputFD != nil && pending.isEmpty { process.closeStandardInput(); inputFD = nil }
        var readers: [(fd: Int32, isOutput: Bool)] = []
        if let fd = process.standardOutput?.fileDescriptor { readers.append((fd, true)) }
        if let fd = process.standardError?.fileDescriptor { readers.append((fd, false)) }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !readers.isEmpty || inputFD != nil {
            var entries = readers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            if let inputFD { entries.append(pollfd(fd: inputFD, events: Int16(POLLOUT), revents: 0)) }
            var waitMilliseconds: Int32 = -1
            if let deadline, !timedOut {
                let left = deadline - ContinuousClock.now
                waitMilliseconds = max(0, Int32(min(Double(left.components.seconds) * 1000 + Double(left.components.attoseconds) / 1e15, 60_000)))
            }
            let ready = entries.withUnsafeMutableBufferPointer { Glibc.poll($0.baseAddress, nfds_t($0.count), waitMilliseconds) }
            if ready < 0 {
                if errno == EINTR { continue }
                throw SubprocessError(.ioFailed, call: "poll", errno: errno)
            }
            if ready == 0, let deadline, !timedOut, ContinuousClock.now >= deadline {
                // The pipes end when the child is gone (unless it left them to children of its own).
                timedOut = true
                process.signal(timeoutSignal)
                continue
            }
            var finished: Set<Int32> = []
            for (index, reader) in readers.enumerated() where entries[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(reader.fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    if reader.isOutput { output.append(contentsOf: buffer[0..<count]) } else { errors.append(contentsOf: buffer[0..<count]) }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    finished.insert(reader.fd)
                }
            }
            readers.removeAll { finished.contains($0.fd) }
            if let fd = inputFD, let entry = entries.last, entry.revents != 0 {
                if entry.revents & Int16(POLLOUT) != 0 {
                    // At most PIPE_BUF: a write that large never blocks once poll says POLLOUT.
                    let count = pending[written..<min(pending.count, written + Int(PIPE_BUF))].withUnsafeBytes {
                        Glibc.write(fd, $0.baseAddress, $0.count)
                    }
                    if count > 0 { written += count }
                    if written == pending.count || (count < 0 && errno != EINTR && errno != EAGAIN) {
                        process.closeStandardInput()
                        inputFD = nil
                    }
                } else {
                    // POLLERR / POLLHUP: the child closed its input; the rest is not wanted.
                    process.closeStandardInput()
                    inputFD = nil
                }
            }
        }
        pending = []
        let exit = process.waitUntilExit()
        return Completed(exit: exit, standardOutput: output, standardError: errors, timedOut: timedOut)
    }

    /// Closes the write end of the child's standard input (its end-of-file).
    public func closeStandardInput() {
        try? standardInput?.close()
    }
}
