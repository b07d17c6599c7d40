import Foundation
import Logging
import SpeakerSyncClient
import Synchronization
import WebSocketTransport

/// What a fault run sets up.
public struct FaultRunConfig: Sendable {
    public var schedule: FaultSchedule
    /// The devices streaming while the faults happen; each streams meetings back to back until the
    /// schedule is done, a new conversation each time.
    public var devices: [FaultDevicePlan]
    /// Streaming pace, × real time.
    public var speed: Double = 2
    /// Meetings to synthesise (devices take them in turn) and their seeds.
    public var meetingSeeds: [UInt64] = [311, 312, 313]
    /// A folder of the run's own (PostgreSQL's data, the server's log).
    public var workDirectory: URL
    /// The server's resident size may not exceed this (checked against the peak sampled).
    public var serverResidentBoundBytes: Int = 1 << 30
    public var serverExecutable: URL

    public init(schedule: FaultSchedule, devices: [FaultDevicePlan], workDirectory: URL, serverExecutable: URL) {
        self.schedule = schedule
        self.devices = devices
        self.workDirectory = workDirectory
        self.serverExecutable = serverExecutable
    }

    /// A mix of every kind of device: SpeakerSyncKit on `device`, `energy` and `speakerkit` (when
    /// `heavy`), one with a shadow provider, two keeping their audio (for the re-diarization job), and
    /// two raw clients that never wait for `session`.
    public static func standardDevices(heavy: Bool) -> [FaultDevicePlan] {
        var devices: [FaultDevicePlan] = [
            FaultDevicePlan(name: "kit-device-1", kind: .kit, provider: "device"),
            FaultDevicePlan(name: "kit-device-2", kind: .kit, provider: "device", shadowProviders: ["energy"], storeAudio: true),
            FaultDevicePlan(name: "kit-energy-1", kind: .kit, provider: "energy", storeAudio: true),
            FaultDevicePlan(name: "kit-energy-2", kind: .kit, provider: "energy"),
            FaultDevicePlan(name: "raw-device-1", kind: .raw, provider: "device"),
            FaultDevicePlan(name: "raw-energy-1", kind: .raw, provider: "energy"),
        ]
        if heavy {
            devices.append(FaultDevicePlan(name: "kit-speakerkit-1", kind: .kit, provider: "speakerkit"))
            devices.append(FaultDevicePlan(name: "kit-speakerkit-2", kind: .kit, provider: "speakerkit", shadowProviders: ["energy"]))
        }
        return devices
    }
}

/// A fault-injection run in the spirit of Jepsen's checkers: devices stream real audio through a TCP
/// proxy to a real server on a PostgreSQL the harness owns, while a schedule breaks things (the
/// network, PostgreSQL, provider workers, the server itself, hostile and never-reading clients, a job
/// across a restart); then the run settles and PostgreSQL is held to what every device was told.
public final class FaultRun: Sendable {
    private let config: FaultRunConfig
    private let logger: Logger
    private let progress: @Sendable (String) -> Void

    public init(config: FaultRunConfig, logger: Logger, progress: @escaping @Sendable (String) -> Void = { _ in }) {
        self.config = config
        self.logger = logger
        self.progress = progress
    }

    public func run() async throws -> FaultReport {
        let began = ContinuousClock.now
        try FileManager.default.createDirectory(at: config.workDirectory, withIntermediateDirectories: true)
        progress("synthesising \(config.meetingSeeds.count) meetings")
        let meetings = try await FaultMeeting.synthesize(seeds: config.meetingSeeds)
        let postgres = try PostgresUnderTest(folder: config.workDirectory.appendingPathComponent("postgres"), logger: logger)
        defer { postgres.stop() }
        let adminKey = "fault-run-admin-\(UUID().uuidString.lowercased())"
        let server = ServerUnderTest(executable: config.serverExecutable, databaseURL: postgres.connectionString,
                                     port: try Self.freePort(), adminKey: adminKey,
                                     logFile: config.workDirectory.appendingPathComponent("server.log"))
        try await server.start()
        defer { server.kill() }
        let proxy = try TCPProxy(upstreamPort: server.port)
        defer { proxy.stop() }
        var tokens: [String: String] = [:]
        for device in config.devices.map(\.name) + ["hostile", "never-reads"] {
            tokens[device] = try Self.deviceToken(server, device: device)
        }
        let ledger = AcknowledgementLedger()
        let devices = FaultDevices(url: "ws://127.0.0.1:\(proxy.port)/v1/listen", ledger: ledger, logger: logger, speed: config.speed)
        let client = try WebSocketClient(logger: logger)
        defer { client.shutdown() }
        let memory = ResidentSampler(server: server)
        memory.start()
        defer { memory.stop() }

        let scheduleDone = RunFlag()
        let results = FaultResults()
        let tokensByDevice = tokens
        // Every device streams meetings back to back until the schedule is over.
        let fleet = Task {
            await withTaskGroup(of: Void.self) { group in
                for (index, plan) in config.devices.enumerated() {
                    group.addTask {
                        await devices.streamMeetings(plan, token: tokensByDevice[plan.name]!, meetings: meetings, firstRound: index,
                                                     client: client, into: results, until: scheduleDone)
                    }
                }
            }
        }
        var report = FaultReport()
        report.serverResidentBoundBytes = config.serverResidentBoundBytes
        let injector = FaultInjector(server: server, postgres: postgres, proxy: proxy, devices: devices, client: client,
                                     tokens: tokens, meetings: meetings, results: results, logger: logger)
        // Let every device get going before the first fault.
        try await Task.sleep(for: .seconds(config.schedule.gapSeconds + 2))
        for (number, step) in config.schedule.steps.enumerated() {
            progress("fault \(number + 1)/\(config.schedule.steps.count): \(step.fault.rawValue)")
            try await injector.inject(step)
            report.faultsInjected[step.fault, default: 0] += 1
            try await Task.sleep(for: .seconds(config.schedule.gapSeconds))
        }
        scheduleDone.set()
        progress("schedule done; waiting for the devices to finish their meetings")
        await fleet.value
        await injector.waitForBackgroundWork()

        // Settle: the server up and ready, every job finished, then hold PostgreSQL to the ledger.
        if !server.isRunning { try await server.start() }
        report.jobs = injector.jobIDs.count
        report.vanishedJobs = await injector.unfinishedJobs(timeoutSeconds: 180)
        report.hostileWordsRefused = ledger.invalidTextRefusals
        let finished = results.all
        report.kitSessions = finished.filter { $0.kind == .kit }.count
        report.rawSessions = finished.filter { $0.kind == .raw && $0.started }.count
        report.rawFinalized = finished.filter { $0.kind == .raw && $0.finalized }.count
        report.rawRefused = finished.filter { $0.kind == .raw && !$0.started }.count
        report.sessions = report.kitSessions + report.rawSessions
        try FaultChecker(databaseURL: postgres.connectionString).check(ledger, into: &report)
        // Why a device failed, as it saw it: the checker knows only what PostgreSQL holds.
        report.kitFailures = report.kitFailures.map { line in
            let id = line.prefix { $0 != ":" }
            guard let result = finished.first(where: { $0.conversationID == id }) else { return line }
            return line + " (\(result.detail))"
        }
        report.serverPeakResidentBytes = memory.peakBytes
        report.seconds = (ContinuousClock.now - began).seconds
        return report
    }

    public static func deviceToken(_ server: ServerUnderTest, device: String) throws -> String {
        let response = try SimpleHTTPClient.request(method: "POST", url: server.baseURL + "/v1/devices/\(device)/tokens?label=fault-run",
                                                    body: [], token: server.adminKey)
        guard response.status == 201, let token = (response.json() as? [String: Any])?["token"] as? String else {
            throw ServerUnderTest.Failure(description: "cannot create a token for \(device): HTTP \(response.status)")
        }
        return token
    }

    public static func freePort() throws -> Int {
        let probe = try TCPProxy(upstreamPort: 1)
        let port = probe.port
        probe.stop()
        return port
    }
}

/// A flag the orchestrating task sets once and the device tasks read.
final class RunFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var isSet: Bool { value.load(ordering: .relaxed) }
}

/// Samples a process's resident size every 250 ms (the server's, across its restarts: `process`
/// says which pid is current); keeps the peak.
public final class ResidentSampler: Sendable {
    private let process: @Sendable () -> pid_t?
    private let peak = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)

    public init(process: @escaping @Sendable () -> pid_t?) { self.process = process }

    public convenience init(server: ServerUnderTest) { self.init(process: { server.processID }) }

    public func start() {
        Thread.detachNewThread { [self] in
            while running.load(ordering: .relaxed) {
                if let pid = process(), let bytes = ProcessStatus.residentBytes(of: pid) {
                    _ = peak.max(bytes, ordering: .relaxed)
                }
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
    }

    /// Stops sampling; the peak seen.
    @discardableResult
    public func stop() -> Int {
        running.store(false, ordering: .relaxed)
        return peakBytes
    }

    public var peakBytes: Int { peak.load(ordering: .relaxed) }
}
