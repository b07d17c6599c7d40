@testable import ChildProcesses
import Foundation
import Testing

@Suite struct SubprocessTests {
    @Test func aChildHoldsOnlyItsStandardDescriptors() throws {
        // A descriptor this process opens without close-on-exec, as Foundation's Pipe does.
        let leaky = open("/dev/null", O_RDONLY)
        #expect(leaky > 2)
        defer { close(leaky) }
        let child = try Subprocess(Subprocess.Configuration(executable: "/bin/sleep", arguments: ["30"]))
        defer { child.signal(SIGKILL); child.waitUntilExit() }
        // Read once the child is in its sleep: until then its dynamic loader may hold a library it is
        // mapping (fd 3, seen once on a loaded CI machine), the child's own descriptor, not one it inherited.
        #expect(Self.waitUntilSleeping(child.processIdentifier))
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.processIdentifier)/fd").compactMap(Int32.init).sorted()
        #expect(held == [0, 1, 2])
    }

    /// Whether `pid` reaches a nanosleep or clock_nanosleep call (its /proc/<pid>/syscall) within 30 s.
    static func waitUntilSleeping(_ pid: pid_t) -> Bool {
        #if arch(x86_64)
        let sleepCalls: Set<Substring> = ["35", "230"]
        #else
        let sleepCalls: Set<Substring> = ["101", "115"] // arm64 (the generic syscall table)
        #endif
        let deadline = Date(timeIntervalSinceNow: 30)
        repeat {
            let call = (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8))?.split(separator: " ").first
            if let call, sleepCalls.contains(call) { return true }
            Thread.sleep(forTimeInterval: 0.01)
        } while Date() < deadline
        return false
    }

    @Test func aPipeIsNotInheritedByAChildAnotherSpawnerStarts() throws {
        // The hang this type exists for: a pipe made while another thread starts a long-lived child
        // with a careless spawner (no descriptor closed). The reader must see end-of-file as soon as
        // its own writer is gone, not when that bystander ends.
        let pipe = try SubprocessSystem.pipe()
        var bystander: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("30"), nil]
        defer { for pointer in argv { free(pointer) } }
        #expect(posix_spawn(&bystander, "/bin/sleep", nil, nil, argv, environ) == 0)
        defer { kill(bystander, SIGKILL); var status: Int32 = 0; waitpid(bystander, &status, 0) }
        close(pipe.write)
        var byte: UInt8 = 0
        #expect(read(pipe.read, &byte, 1) == 0)
        close(pipe.read)
        var status: Int32 = 0
        #expect(waitpid(bystander, &status, WNOHANG) == 0) // still running: the end-of-file was not its exit
    }

    @Test func exitCodesAndSignalsAreReportedOnce() throws {
        let failing = try Subprocess(Subprocess.Configuration(executable: "/bin/sh", arguments: ["-c", "exit 7"]))
        let waiters = (0..<4).map { _ in Thread.detachedWaiter(failing) }
        let exits = waiters.map { $0.value() }
        #expect(exits.allSatisfy { $0 == Subprocess.Exit(reason: .exited, status: 7) })
        #expect(failing.isRunning == false)
        #expect(failing.terminationStatus == 7)

        let sleeper = try Subprocess(Subprocess.Configuration(executable: "/bin/sleep", arguments: ["30"]))
        #expect(sleeper.isRunning)
        sleeper.signal(SIGTERM)
        #expect(sleeper.waitUntilExit() == Subprocess.Exit(reason: .signalled, status: SIGTERM))
        sleeper.signal(SIGKILL) // reaped: not sent (the number may be another process's by now)
    }

    @Test func bothOutputsAndTheInputAreServedTogether() throws {
        // 1 MiB on each output, more than a pipe holds: read one after the other, this would deadlock.
        let script = "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2; cat"
        let input = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0) })
        let done = try Subprocess.run(Subprocess.Configuration(executable: "/bin/sh", arguments: ["-c", script]), input: input)
        #expect(done.exit.succeeded)
        #expect(done.standardError.count == 1_048_576)
        #expect(done.standardOutput.count == 1_048_576 + input.count)
        #expect(done.standardOutput.suffix(input.count) == input)
        #expect(done.timedOut == false)
    }

    @Test func aRunPastItsBoundIsStopped() throws {
        let done = try Subprocess.run(Subprocess.Configuration(executable: "/bin/sleep", arguments: ["30"]), timeoutSeconds: 0.2)
        #expect(done.timedOut)
        #expect(done.exit == Subprocess.Exit(reason: .signalled, status: SIGKILL))
    }

    @Test func environmentWorkingDirectoryAndStandardErrorAsOutput() throws {
        var configuration = Subprocess.Configuration(executable: "/bin/sh", arguments: ["-c", "pwd; echo \"$ONLY\"; env | wc -l; echo oops >&2"],
                                                     environment: ["ONLY": "this"])
        configuration.workingDirectory = "/tmp"
        configuration.standardOutput = .pipe
        configuration.standardError = .standardOutput
        let done = try Subprocess.run(configuration)
        let lines = done.standardOutputText.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.first == "/tmp")
        #expect(lines.dropFirst().first == "this")
        // ONLY and what sh itself sets (PWD, maybe SHLVL and _): nothing of this process's environment.
        #expect(Int(lines.dropFirst(2).first ?? "") ?? 99 <= 4)
        #expect(lines.last == "oops")
        #expect(done.standardError.isEmpty)
    }

    @Test func aLogIsAppendedToByEveryChildGivenIt() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("subprocess-log-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        for word in ["first", "second"] {
            let child = try Subprocess(Subprocess.Configuration(executable: "/bin/sh", arguments: ["-c", "echo \(word); echo \(word)-err >&2"]),
                                       appendingOutputTo: log)
            #expect(child.waitUntilExit().succeeded)
        }
        #expect(try String(contentsOf: log, encoding: .utf8) == "first\nfirst-err\nsecond\nsecond-err\n")
    }

    @Test func aMissingExecutableIsASpawnError() {
        #expect {
            _ = try Subprocess(Subprocess.Configuration(executable: "/nonexistent/speakersync-tool"))
        } throws: { error in
            (error as? SubprocessError).map { $0.code == .spawnFailed && $0.errno == ENOENT } ?? false
        }
    }
}

/// Waits for a process on a thread of its own.
private final class Waiter: @unchecked Sendable { // `exit` is written once before `done` is signalled, read after
    let done = DispatchSemaphore(value: 0)
    var exit: Subprocess.Exit?
    func value() -> Subprocess.Exit {
        done.wait()
        return exit!
    }
}

extension Thread {
    fileprivate static func detachedWaiter(_ process: Subprocess) -> Waiter {
        let waiter = Waiter()
        Thread.detachNewThread {
            waiter.exit = process.waitUntilExit()
            waiter.done.signal()
        }
        return waiter
    }
}
