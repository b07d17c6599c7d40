import ArgumentParser
import FaultInjection
import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// `speakersync-bench fleet`: the fault-injection harness across real network boundaries (issue 33):
/// three servers, one PostgreSQL and HAProxy, each in its own network namespace. Prints the table;
/// exits 1 when a promise was broken, 2 when every check passed but the fencing audit found nothing
/// to check (the servers recorded no fenced writes), so neither is mistaken for a pass. Needs root
/// (namespaces, veths, nftables).
struct FleetBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Three servers on one PostgreSQL behind HAProxy, in network namespaces, while servers are killed, partitioned from PostgreSQL and paused and devices cut off; then every acknowledged word, the fencing and the jobs are checked and takeover times reported.")

    @Option(help: "short (each kind of fault, every server hit) or long (--count faults in a seeded order)") var schedule = "short"
    @Option(help: "faults in the long schedule") var count = 40
    @Option(help: "seed of the long schedule's order") var seed: UInt64 = 33
    @Option(help: "seconds between faults") var gap = 8.0
    @Option(help: "streaming pace, × real time") var speed = 2.0
    @Option(help: "the servers' --lease-seconds (passed only when speakersync serve offers it)") var leaseSeconds = 6
    @Option(help: "SpeakerSyncKit devices on `device` besides the single-server harness's six devices") var extraKitDevices = 4
    @Option(help: "each server's resident-size bound in MiB (the run fails above it)") var rssBoundMib = 1024
    @Option(help: "work folder (PostgreSQL data, logs, HAProxy configuration); default: a new temporary one") var workDir: String?

    func validate() throws {
        guard schedule == "short" || schedule == "long" else { throw ValidationError("--schedule is short or long") }
        guard leaseSeconds > 0 else { throw ValidationError("--lease-seconds must be positive") }
        guard geteuid() == 0 else { throw ValidationError("the fleet harness makes network namespaces: run it as root") }
    }

    func run() async throws {
        var logger = Logger(label: "fleet")
        logger.logLevel = .error
        let folder = workDir.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-fleet-\(getpid())")
        let devices = FleetRunConfig.standardDevices(extraKit: extraKitDevices)
        let plan: FleetSchedule = schedule == "short"
            ? .short(leaseSeconds: Double(leaseSeconds))
            : .long(count: count, seed: seed, leaseSeconds: Double(leaseSeconds), gapSeconds: gap, deviceCount: devices.count)
        var config = FleetRunConfig(schedule: plan, devices: devices, workDirectory: folder, serverExecutable: try ServerUnderTest.siblingExecutable())
        config.speed = speed
        config.leaseSeconds = leaseSeconds
        config.serverResidentBoundBytes = rssBoundMib << 20
        // Interrupted: the namespaces go too (the children die with this process: parent-death signals).
        let signals = [SIGINT, SIGTERM].map { (number: Int32) -> DispatchSourceSignal in
            _ = signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                FileHandle.standardError.write(Data("fleet: interrupted; removing the namespaces\n".utf8))
                FleetNetwork.removeAll()
                Glibc.exit(130)
            }
            source.resume()
            return source
        }
        defer { signals.forEach { $0.cancel() } }
        let report = try await FleetRun(config: config, logger: logger) { line in
            FileHandle.standardError.write(Data("fleet: \(line)\n".utf8))
        }.run()
        print(report.table)
        print("\nfaults:\n" + report.timeline)
        if !report.problems.isEmpty { print("\n" + report.problems) }
        print("\nlogs: \(folder.path)")
        if !report.passed { throw ExitCode(1) }
        if report.inconclusive { throw ExitCode(2) }
    }
}
