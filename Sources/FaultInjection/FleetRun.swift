import Foundation
import Logging
import SpeakerSyncClient
import Synchronization
import WebSocketTransport
#if canImport(Glibc)
import Glibc
#endif

/// What a fleet run sets up.
public struct FleetRunConfig: Sendable {
    public var schedule: FleetSchedule
    /// The devices streaming while the faults happen; each streams meetings back to back until the
    /// schedule is done, a new conversation each time, through HAProxy from an address of its own.
    public var devices: [FaultDevicePlan]
    /// Streaming pace, × real time.
    public var speed: Double = 2
    public var meetingSeeds: [UInt64] = [311, 312, 313]
    /// A folder of the run's own (PostgreSQL's data, the logs, HAProxy's configuration and socket).
    public var workDirectory: URL
    public var serverExecutable: URL
    /// The servers' `--lease-seconds`, passed only when `speakersync serve --help` offers it.
    public var leaseSeconds: Int = 6
    /// Each server's resident size may not exceed this.
    public var serverResidentBoundBytes: Int = 1 << 30

    public init(schedule: FleetSchedule, devices: [FaultDevicePlan], workDirectory: URL, serverExecutable: URL) {
        self.schedule = schedule
        self.devices = devices
        self.workDirectory = workDirectory
        self.serverExecutable = serverExecutable
    }

    /// The single-server harness's mix (SpeakerSyncKit on `device` and `energy`, one with a shadow,
    /// two keeping their audio, two raw clients) and `extraKit` more SpeakerSyncKit devices on
    /// `device`, so that every server has some to lose.
    public static func standardDevices(extraKit: Int) -> [FaultDevicePlan] {
        FaultRunConfig.standardDevices(heavy: false)
            + (0..<max(0, extraKit)).map { FaultDevicePlan(name: "kit-device-\($0 + 3)", kind: .kit, provider: "device") }
    }
}

/// The fault-injection harness across real network boundaries (issue 33): three `speakersync
/// serve` on one PostgreSQL behind HAProxy, each machine in a network namespace of its own joined
/// by veth pairs to a bridge (`FleetNetwork`); SpeakerSyncKit and raw devices stream real audio
/// through HAProxy while servers are SIGKILLed, cut off from PostgreSQL, SIGSTOPped past their
/// lease and devices cut off. Then every acknowledged word is held to PostgreSQL (FaultChecker),
/// the fencing to `conversation_writes` and `lease_history` (FleetChecker), the jobs to their rows,
/// and the time each device took to stream again elsewhere is reported.
public final class FleetRun: Sendable {
    private let config: FleetRunConfig
    private let logger: Logger
    private let progress: @Sendable (String) -> Void

    public init(config: FleetRunConfig, logger: Logger, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.config = config
        self.logger = logger
        self.progress = progress
    }

    /// Whether this `speakersync` takes `--lease-seconds` (asked of `serve --help`).
    public static func offersLeaseFlag(_ executable: URL) -> Bool {
        let help = (try? FleetCommand.run([executable.path, "serve", "--help"], allowFailure: true)) ?? ""
        return help.contains("--lease-seconds")
    }

    public func run() async throws -> FleetReport {
        let began = ContinuousClock.now
        let work = config.workDirectory
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        chmod(work.path, 0o755)  // PostgreSQL's account must reach its folder inside
        progress("synthesising \(config.meetingSeeds.count) meetings")
        let meetings = try await FaultMeeting.synthesize(seeds: config.meetingSeeds)

        progress("building the network: namespaces \(FleetNetwork.namespaces.joined(separator: ", ")) on bridge \(FleetNetwork.bridge)")
        let network = try FleetNetwork(deviceCount: config.devices.count)
        defer { network.tearDown() }
        try network.up()

        progress("starting PostgreSQL in \(FleetNetwork.postgresNamespace) (\(FleetNetwork.postgresAddress))")
        let postgres = FleetPostgres(folder: work.appendingPathComponent("postgres"), address: FleetNetwork.postgresAddress,
                                     launcher: network.launcher(FleetNetwork.postgresNamespace))
        defer { postgres.stop() }
        try await postgres.start()

        var report = FleetReport()
        report.serverResidentBoundBytes = config.serverResidentBoundBytes
        var serverArguments = ["--host", "0.0.0.0", "--max-connections-per-address", "0"]
        if Self.offersLeaseFlag(config.serverExecutable) {
            serverArguments += ["--lease-seconds", "\(config.leaseSeconds)"]
            report.lease = "--lease-seconds \(config.leaseSeconds)"
        } else {
            report.lease = "no --lease-seconds in this speakersync (not passed; the servers' own lease)"
        }
        let adminKey = "fleet-run-admin-\(UUID().uuidString.lowercased())"
        let servers = FleetNetwork.servers.map { server in
            ServerUnderTest(executable: config.serverExecutable, databaseURL: postgres.databaseURL, port: 8080, adminKey: adminKey,
                            extraArguments: serverArguments, logFile: work.appendingPathComponent("server-\(server.name).log"),
                            host: server.address, launcher: network.launcher(server.namespace))
        }
        defer {
            for server in servers {
                server.resume()
                server.kill()
            }
        }
        for (server, place) in zip(servers, FleetNetwork.servers) {
            progress("starting server \(place.name) in \(place.namespace) (\(place.address):8080)")
            try await server.start()
        }

        progress("starting HAProxy in \(FleetNetwork.balancerNamespace) (\(FleetNetwork.balancerAddress):8080)")
        let balancer = FleetBalancer(folder: work, address: FleetNetwork.balancerAddress, port: 8080,
                                     servers: FleetNetwork.servers.map { ($0.name, $0.address, 8080) },
                                     launcher: network.launcher(FleetNetwork.balancerNamespace))
        defer { balancer.stop() }
        try await balancer.start()
        guard await balancer.waitAllUp(timeoutSeconds: 30) else {
            throw FleetCommand.Failure(description: "HAProxy does not see every server up: \(balancer.serverStates())")
        }

        // Tokens made through HAProxy (one server writes them), honoured by all three (they share the database).
        var tokens: [String: String] = [:]
        for device in config.devices.map(\.name) {
            tokens[device] = try Self.deviceToken(baseURL: balancer.baseURL, adminKey: adminKey, device: device)
        }
        try await Self.waitUntilHonoured(tokens, by: servers)

        let ledger = AcknowledgementLedger()
        let timeline = FleetTimeline()
        let client = try WebSocketClient(logger: logger)
        defer { client.shutdown() }
        // Each device reaches HAProxy through a forwarder of its own, from its own address.
        let proxies = try config.devices.indices.map {
            try TCPProxy(upstreamPort: balancer.port, upstreamHost: balancer.address, sourceAddress: FleetNetwork.deviceAddress($0))
        }
        defer { for proxy in proxies { proxy.stop() } }
        let samplers = servers.map { ResidentSampler(server: $0) }
        for sampler in samplers { sampler.start() }
        defer { for sampler in samplers { sampler.stop() } }

        let scheduleDone = RunFlag()
        let results = FaultResults()
        let tokensByDevice = tokens
        let (devicePlans, speed) = (config.devices, config.speed)
        let observer: @Sendable (FaultDeviceEvent) -> Void = { timeline.record($0) }
        let logger = self.logger
        let fleet = Task {
            await withTaskGroup(of: Void.self) { group in
                for (index, plan) in devicePlans.enumerated() {
                    let devices = FaultDevices(url: "ws://127.0.0.1:\(proxies[index].port)/v1/listen", ledger: ledger, logger: logger,
                                               speed: speed, observer: observer)
                    group.addTask {
                        await devices.streamMeetings(plan, token: tokensByDevice[plan.name]!, meetings: meetings, firstRound: index,
                                                     client: client, into: results, until: scheduleDone)
                    }
                }
            }
        }

        let injector = FleetInjector(network: network, servers: servers, balancer: balancer, devices: config.devices,
                                     timeline: timeline, results: results, adminKey: adminKey, began: began, logger: logger)
        try await Task.sleep(for: .seconds(config.schedule.gapSeconds + 2))
        for (number, step) in config.schedule.steps.enumerated() {
            let target = step.fault == .devicePartition ? config.devices[step.target % config.devices.count].name
                : FleetNetwork.servers[step.target % 3].name
            progress("fault \(number + 1)/\(config.schedule.steps.count): \(step.fault.rawValue) \(target) for \(Int(step.holdSeconds)) s")
            let injection = await injector.inject(step)
            report.injections.append(injection)
            report.faultsInjected[step.fault, default: 0] += 1
            try await Task.sleep(for: .seconds(config.schedule.gapSeconds))
        }
        scheduleDone.set()
        progress("schedule done; waiting for the devices to finish their meetings")
        await fleet.value

        // Settle: every server up and in HAProxy, every job finished; then hold PostgreSQL to the ledger.
        await injector.restoreEverything()
        if !(await balancer.waitAllUp(timeoutSeconds: 60)) {
            report.serverFailures.append("after the run HAProxy sees \(balancer.serverStates())")
        }
        report.serverFailures += injector.failures
        progress("waiting for \(injector.jobIDs.count) job(s)")
        let jobs = await injector.jobOutcomes(baseURL: balancer.baseURL, timeoutSeconds: 120)
        report.words.jobs = injector.jobIDs.count
        report.words.vanishedJobs = jobs.vanished
        report.failedJobs = jobs.failed
        let finished = results.all
        report.words.kitSessions = finished.filter { $0.kind == .kit }.count
        report.words.rawSessions = finished.filter { $0.kind == .raw && $0.started }.count
        report.words.rawFinalized = finished.filter { $0.kind == .raw && $0.finalized }.count
        report.words.rawRefused = finished.filter { $0.kind == .raw && !$0.started }.count
        report.words.sessions = report.words.kitSessions + report.words.rawSessions
        progress("checking PostgreSQL")
        try FaultChecker(databaseURL: postgres.checkerConnectionString).check(ledger, into: &report.words)
        report.words.kitFailures = report.words.kitFailures.map { line in
            let id = line.prefix { $0 != ":" }
            guard let result = finished.first(where: { $0.conversationID == id }) else { return line }
            return line + " (\(result.detail))"
        }
        let checker = FleetChecker(connectionString: postgres.checkerConnectionString)
        report.fencing = try checker.audit()
        // Why a job did not finish, as PostgreSQL has it; what is stuck waiting on a lock.
        report.words.vanishedJobs = report.words.vanishedJobs.map { line in
            checker.jobState(String(line.prefix { $0 != ":" })).map { line + " (\($0))" } ?? line
        }
        report.lockWaits = checker.lockWaits()

        // Takeovers: each kit device HAProxy had on a server when it failed.
        for injection in report.injections where injection.fault.movesDevices {
            for (device, conversation) in injection.affected {
                report.takeovers.append(FleetTakeover(fault: injection.fault, server: injection.target, device: device, conversationID: conversation,
                                                      outcome: timeline.takeover(of: conversation, after: injector.instant(of: injection))))
            }
        }
        report.devicePartitionsSurvived = injector.devicePartitions.filter { !$0 }.count
        report.devicePartitionsReconnected = injector.devicePartitions.filter { $0 }.count
        for (server, sampler) in zip(FleetNetwork.servers, samplers) { report.serverPeakResidentBytes[server.name] = sampler.peakBytes }
        report.seconds = (ContinuousClock.now - began).seconds
        return report
    }

    static func deviceToken(baseURL: String, adminKey: String, device: String) throws -> String {
        let response = try SimpleHTTPClient.request(method: "POST", url: baseURL + "/v1/devices/\(device)/tokens?label=fleet-run",
                                                    body: [], token: adminKey)
        guard response.status == 201, let token = (response.json() as? [String: Any])?["token"] as? String else {
            throw FleetCommand.Failure(description: "cannot create a token for \(device): HTTP \(response.status) \(response.text.prefix(200))")
        }
        return token
    }

    /// Every server honours every token (each learns of a token another made through PostgreSQL).
    static func waitUntilHonoured(_ tokens: [String: String], by servers: [ServerUnderTest]) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        for server in servers {
            for (device, token) in tokens {
                while (try? SimpleHTTPClient.get(server.baseURL + "/v1/devices/\(device)/settings", token: token, timeoutSeconds: 5))?.status != 200 {
                    guard ContinuousClock.now < deadline else {
                        throw FleetCommand.Failure(description: "server \(server.host) does not honour \(device)'s token within 30 s")
                    }
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
        }
    }
}

/// Carries out the fleet schedule's faults, one at a time.
final class FleetInjector: Sendable {
    private let network: FleetNetwork
    private let servers: [ServerUnderTest]
    private let balancer: FleetBalancer
    private let devices: [FaultDevicePlan]
    private let timeline: FleetTimeline
    private let results: FaultResults
    private let adminKey: String
    private let began: ContinuousClock.Instant
    private let logger: Logger
    private let jobs = Mutex<[String]>([])
    private let usedForJobs = Mutex<Set<String>>([])
    private let problems = Mutex<[String]>([])
    /// Per device partition: whether the device's connection dropped during it.
    private let partitions = Mutex<[Bool]>([])

    init(network: FleetNetwork, servers: [ServerUnderTest], balancer: FleetBalancer, devices: [FaultDevicePlan], timeline: FleetTimeline,
         results: FaultResults, adminKey: String, began: ContinuousClock.Instant, logger: Logger) {
        self.network = network
        self.servers = servers
        self.balancer = balancer
        self.devices = devices
        self.timeline = timeline
        self.results = results
        self.adminKey = adminKey
        self.began = began
        self.logger = logger
    }

    var jobIDs: [String] { jobs.withLock { $0 } }
    var failures: [String] { problems.withLock { $0 } }
    var devicePartitions: [Bool] { partitions.withLock { $0 } }

    func instant(of injection: FleetInjection) -> ContinuousClock.Instant { began + .seconds(injection.atSeconds) }

    /// The kit devices HAProxy has on server `name`, with the conversation each is streaming.
    private func kitDevicesOn(_ name: String) -> [(device: String, conversationID: String)] {
        let onServer = Set(balancer.sessionsByClient().filter { $0.server == name }.map(\.client))
        return devices.enumerated().compactMap { index, plan in
            guard plan.kind == .kit, onServer.contains(FleetNetwork.deviceAddress(index)),
                  let conversation = timeline.conversation(of: plan.name) else { return nil }
            return (plan.name, conversation)
        }
    }

    func inject(_ step: FleetSchedule.Step) async -> FleetInjection {
        let serverIndex = step.target % servers.count
        let place = FleetNetwork.servers[serverIndex]
        let server = servers[serverIndex]
        var injection = FleetInjection(fault: step.fault, target: place.name, atSeconds: 0, holdSeconds: step.holdSeconds)
        func mark() { injection.atSeconds = (ContinuousClock.now - began).seconds }
        switch step.fault {
        case .serverKill:
            if let job = await queueJob(on: server) { injection.note = "job \(job) queued on it just before" }
            injection.affected = kitDevicesOn(place.name)
            mark()
            server.kill()
            try? await Task.sleep(for: .seconds(step.holdSeconds))
            await restart(server, name: place.name)
            let back = await backInService(place.name, after: "its restart")
            injection.note += (injection.note.isEmpty ? "" : "; ") + back
        case .postgresPartition:
            injection.affected = kitDevicesOn(place.name)
            mark()
            do {
                try network.partitionFromPostgres(place.namespace)
            } catch {
                problems.withLock { $0.append("partitioning \(place.name) from PostgreSQL: \(error)") }
            }
            try? await Task.sleep(for: .seconds(step.holdSeconds))
            network.healFromPostgres(place.namespace)
            injection.note = await backInService(place.name, after: "the partition healed")
        case .serverPause:
            injection.affected = kitDevicesOn(place.name)
            mark()
            server.pause()
            try? await Task.sleep(for: .seconds(step.holdSeconds))
            server.resume()
            injection.note = await backInService(place.name, after: "SIGCONT")
        case .devicePartition:
            let index = step.target % devices.count
            let device = devices[index]
            injection.target = device.name
            let conversation = timeline.conversation(of: device.name)
            mark()
            let at = ContinuousClock.now
            do {
                try network.partitionDevice(FleetNetwork.deviceAddress(index))
            } catch {
                problems.withLock { $0.append("partitioning device \(device.name): \(error)") }
            }
            try? await Task.sleep(for: .seconds(step.holdSeconds))
            network.healDevice(FleetNetwork.deviceAddress(index))
            if device.kind == .kit, let conversation {
                // Whether its connection dropped while cut off (or just after, as the kit noticed).
                try? await Task.sleep(for: .seconds(2))
                let events = timeline.events(of: conversation)
                let dropped = events.contains { $0.at >= at && $0.kind == .dropped }
                partitions.withLock { $0.append(dropped) }
                // The harness's own check: nothing can reach a device that is cut off (a second's grace
                // for what was already on its way).
                let through = events.filter { $0.kind == .stored && $0.at > at + .seconds(1) && $0.at < at + .seconds(step.holdSeconds) }.count
                if through > 0 {
                    problems.withLock { $0.append("harness: the partition of \(device.name) let \(through) acknowledgement(s) through") }
                }
                injection.note = (dropped ? "its connection dropped and resumed" : "its connection survived")
                    + "; acknowledgements while cut off: \(through)"
            } else {
                injection.note = device.kind == .raw ? "a raw device" : "between meetings"
            }
        }
        return injection
    }

    /// Waits (up to 30 s) until HAProxy's checks see server `name` up again after a fault ended:
    /// capacity must return. A server that stays out is a failure of the run.
    private func backInService(_ name: String, after event: String) async -> String {
        let since = ContinuousClock.now
        let deadline = since + .seconds(30)
        while ContinuousClock.now < deadline {
            if balancer.serverStates()[name] == "UP" {
                return String(format: "back in service %.1f s after \(event)", (ContinuousClock.now - since).seconds)
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        let state = balancer.serverStates()[name] ?? "unknown"
        problems.withLock { $0.append("server \(name) not back in service 30 s after \(event) (HAProxy: \(state))") }
        return "NOT back in service 30 s after \(event) (HAProxy: \(state))"
    }

    private func restart(_ server: ServerUnderTest, name: String) async {
        do {
            try await server.start()
        } catch {
            problems.withLock { $0.append("server \(name) did not restart: \(error)") }
        }
    }

    /// A re-diarization of a finished conversation that kept its audio, asked of `server` itself
    /// (not through HAProxy), so that the server then killed is the one that accepted it.
    private func queueJob(on server: ServerUnderTest) async -> String? {
        let used = usedForJobs.withLock { $0 }
        guard let conversation = results.all.filter({ $0.finalized && $0.storeAudio && !used.contains($0.conversationID) }).last?.conversationID else {
            return nil
        }
        usedForJobs.withLock { _ = $0.insert(conversation) }
        let askUntil = ContinuousClock.now + .seconds(10)
        repeat {
            if let response = try? SimpleHTTPClient.request(method: "POST", url: server.baseURL + "/v1/conversations/\(conversation)/diarize?provider=energy",
                                                            body: [], token: adminKey) {
                if response.status == 202, let id = (response.json() as? [String: Any])?["id"] as? String {
                    jobs.withLock { $0.append(id) }
                    return id
                }
                if (400..<500).contains(response.status), response.status != 429 {
                    logger.warning("fleet run: re-diarization refused", metadata: ["status": "\(response.status)", "body": "\(response.text.prefix(200))"])
                    return nil
                }
            }
            try? await Task.sleep(for: .milliseconds(500))
        } while ContinuousClock.now < askUntil
        return nil
    }

    /// After the schedule: partitions healed, paused servers resumed, dead ones started.
    func restoreEverything() async {
        for (place, server) in zip(FleetNetwork.servers, servers) {
            network.healFromPostgres(place.namespace)
            server.resume()
            if !server.isRunning {
                problems.withLock { $0.append("server \(place.name) was not running after the schedule") }
                await restart(server, name: place.name)
            }
        }
        for index in devices.indices { network.healDevice(FleetNetwork.deviceAddress(index)) }
    }

    /// Jobs that answer 404 (vanished) or have not finished within `timeoutSeconds` (counted as
    /// vanished, as the single-server harness does), and those that finished `failed`.
    func jobOutcomes(baseURL: String, timeoutSeconds: Double) async -> (vanished: [String], failed: [String]) {
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        var pending = Set(jobIDs)
        var vanished: [String] = []
        var failed: [String] = []
        while !pending.isEmpty, ContinuousClock.now < deadline {
            for id in pending {
                guard let response = try? SimpleHTTPClient.get(baseURL + "/v1/diarization-jobs/\(id)", token: adminKey, timeoutSeconds: 5) else { continue }
                if response.status == 404 {
                    vanished.append("\(id): 404")
                    pending.remove(id)
                } else if let object = response.json() as? [String: Any], let status = object["status"] as? String, status == "done" || status == "failed" {
                    if status == "failed" { failed.append("\(id): \(object["error"].map { "\($0)" } ?? "failed")") }
                    pending.remove(id)
                }
            }
            if !pending.isEmpty { try? await Task.sleep(for: .seconds(1)) }
        }
        return (vanished + pending.map { "\($0): not finished within \(Int(timeoutSeconds)) s" }, failed)
    }
}
