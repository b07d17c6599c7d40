import Glibc
import Testing
@testable import ProviderIsolation

/// What a session is told about a worker's end, from real wait statuses.
@Suite struct WorkerExitTests {
    @Test func signalsAndExitsAreNamed() {
        // Linux encodes "killed by signal s" as s (plus 0x80 with a core dump), "exited with n" as n << 8.
        #expect(WorkerExit(waitStatus: SIGSEGV, maxResidentKilobytes: 0, memoryLimitBytes: nil).description == "signal 11 (SIGSEGV)")
        #expect(WorkerExit(waitStatus: SIGABRT | 0x80, maxResidentKilobytes: 0, memoryLimitBytes: nil).description == "signal 6 (SIGABRT), core dumped")
        let exited = WorkerExit(waitStatus: 7 << 8, maxResidentKilobytes: 0, memoryLimitBytes: nil)
        #expect(exited.description == "exit status 7")
        #expect(exited.verb == "exited")
        #expect(WorkerExit(waitStatus: SIGKILL, maxResidentKilobytes: 0, memoryLimitBytes: nil).verb == "crashed")
        #expect(WorkerExit(waitStatus: 64, maxResidentKilobytes: 0, memoryLimitBytes: nil).description == "signal 64")
        #expect(WorkerExit(cause: .unknown).description == "an unknown cause")
    }

    @Test func aWorkerAtItsMemoryLimitSaysSo() {
        let limit: UInt64 = 256 << 20
        let full = WorkerExit(waitStatus: SIGABRT, maxResidentKilobytes: 200 << 10, memoryLimitBytes: limit)
        #expect(full.reachedMemoryLimit)
        #expect(full.description == "signal 6 (SIGABRT); its memory had reached 200 MiB resident, near its 256 MiB limit")
        #expect(!WorkerExit(waitStatus: SIGABRT, maxResidentKilobytes: 100 << 10, memoryLimitBytes: limit).reachedMemoryLimit)
        #expect(!WorkerExit(waitStatus: SIGABRT, maxResidentKilobytes: 250 << 10, memoryLimitBytes: nil).reachedMemoryLimit)
    }
}
