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

    /// posix_spawn hands the spawner's memory high-water mark to the child's ru_maxrss (the child runs
    /// in the spawner's address space until exec). Seen for real: a tiny child of a process that touched
    /// 256 MiB reports at least that much, and is not blamed for it; a peak above the spawner's, or one
    /// sampled while it ran, is the worker's own.
    @Test func theSpawnersMemoryIsNotTheWorkers() throws {
        let size = 256 << 20
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096)
        defer { block.deallocate() }
        for offset in stride(from: 0, to: size, by: 4096) { block.storeBytes(of: 1, toByteOffset: offset, as: UInt8.self) }
        let pid = try Syscall.spawn(executable: "/bin/true", arguments: ["/bin/true"], environment: [], childDescriptor: -1)
        let spawner = try #require(PeakResidentMemory.kilobytes())
        let (_, usage) = try Syscall.waitForExit(pid)
        #expect(usage.ru_maxrss >= size >> 10, "ru_maxrss \(usage.ru_maxrss) KiB: the kernel no longer folds the spawner's peak in")
        #expect(PeakResidentMemory.workerPeakKilobytes(reported: usage.ru_maxrss, spawnerAfterSpawn: spawner, sampled: 0) == 0)
        #expect(PeakResidentMemory.workerPeakKilobytes(reported: spawner + 1, spawnerAfterSpawn: spawner, sampled: 0) == spawner + 1)
        #expect(PeakResidentMemory.workerPeakKilobytes(reported: usage.ru_maxrss, spawnerAfterSpawn: spawner, sampled: 5_000) == 5_000)
    }
}
