import ArgumentParser
import FaultInjection
import Foundation
import Logging

/// `speakersync-bench faults`: the fault-injection harness (docs/reliability.md). Prints the table;
/// exits non-zero when a promise was broken, so a failed run is never mistaken for a figure.
struct FaultsBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faults",
        abstract: "Devices stream real audio while PostgreSQL, provider workers, the server, the network and hostile clients fail; then every acknowledged word is checked in PostgreSQL.")

    @Option(help: "short (every kind of fault once) or long (--count faults in a seeded order)") var schedule = "long"
    @Option(help: "faults in the long schedule") var count = 220
    @Option(help: "seed of the long schedule's order") var seed: UInt64 = 27
    @Option(help: "seconds between faults") var gap = 3.0
    @Option(help: "streaming pace, × real time") var speed = 2.0
    @Flag(help: "add speakerkit devices (CPU heavy)") var heavy = false
    @Option(help: "the server's resident-size bound in MiB (the run fails above it)") var rssBoundMib = 1024
    @Option(help: "work folder (PostgreSQL data, server log); default: a new temporary one") var workDir: String?

    func run() async throws {
        var logger = Logger(label: "faults")
        logger.logLevel = .error
        let folder = workDir.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-faults-\(getpid())")
        let plan: FaultSchedule = schedule == "short" ? .short : .long(count: count, seed: seed, gapSeconds: gap)
        var config = FaultRunConfig(schedule: plan, devices: FaultRunConfig.standardDevices(heavy: heavy), workDirectory: folder,
                                    serverExecutable: try ServerUnderTest.siblingExecutable())
        config.speed = speed
        config.serverResidentBoundBytes = rssBoundMib << 20
        let report = try await FaultRun(config: config, logger: logger) { line in
            FileHandle.standardError.write(Data("faults: \(line)\n".utf8))
        }.run()
        print(report.table)
        if !report.passed {
            print(report.problems)
            throw ExitCode(1)
        }
    }
}
