import Foundation
import Logging
import SpeakerSyncClient
import Synchronization
import WebSocketTransport
#if canImport(Glibc)
import Glibc
#endif

/// Carries out a schedule's faults, one at a time; keeps the work some of them leave running (a
/// never-reading client, a hostile device) and the jobs queued, for the checker.
final class FaultInjector: Sendable {
    private let server: ServerUnderTest
    private let postgres: PostgresUnderTest
    private let proxy: TCPProxy
    private let devices: FaultDevices
    private let client: WebSocketClient
    private let tokens: [String: String]
    private let meetings: [FaultMeeting]
    private let results: FaultResults
    private let logger: Logger
    private let background = Mutex<[Task<Void, Never>]>([])
    private let jobs = Mutex<[String]>([])
    private let jobRestarts = Atomic<Int>(0)

    init(server: ServerUnderTest, postgres: PostgresUnderTest, proxy: TCPProxy, devices: FaultDevices, client: WebSocketClient,
         tokens: [String: String], meetings: [FaultMeeting], results: FaultResults, logger: Logger) {
        self.server = server
        self.postgres = postgres
        self.proxy = proxy
        self.devices = devices
        self.client = client
        self.tokens = tokens
        self.meetings = meetings
        self.results = results
        self.logger = logger
    }

    var jobIDs: [String] { jobs.withLock { $0 } }

    func inject(_ step: FaultSchedule.Step) async throws {
        switch step.fault {
        case .networkCut:
            proxy.dropAll()
        case .postgresStop:
            postgres.stop()
            try await Task.sleep(for: .seconds(step.holdSeconds))
            try postgres.start()
        case .postgresFreeze:
            let frozen = postgres.freeze()
            try await Task.sleep(for: .seconds(step.holdSeconds))
            postgres.thaw(frozen)
        case .workerKill:
            // The busiest plugin's worker: its sessions fail with provider_failed and resume.
            if let worker = server.providerWorkers().first(where: { $0.plugin.contains("energy") }) ?? server.providerWorkers().first {
                kill(worker.pid, SIGKILL)
            }
        case .serverKill:
            server.kill()
            try await Task.sleep(for: .milliseconds(300))
            try await server.start()
        case .serverTerm:
            server.terminate()
            try await server.start()
        case .neverReader:
            let port = proxy.port
            let token = tokens["never-reads"]!
            let seconds = step.holdSeconds
            keep(Task.detached { _ = try? NeverReadingClient.flood(port: port, token: token, seconds: seconds) })
        case .hostileStrings:
            let plan = FaultDevicePlan(name: "hostile", kind: .raw, provider: "device")
            let (devices, client, token, meeting, results) = (devices, client, tokens["hostile"]!, meetings[0], results)
            keep(Task {
                let result = await devices.runRaw(plan, token: token, meeting: meeting, client: client, hostile: true)
                results.append(result)
            })
        case .jobAcrossRestart:
            try await jobAcrossRestart()
        }
    }

    /// A re-diarization of a finished conversation with stored audio, answered 202, then the server
    /// stopped at once (SIGTERM and SIGKILL in turn) and started again: the job must not vanish.
    private func jobAcrossRestart() async throws {
        // A conversation that kept its audio must have finished; on a loaded machine the first may
        // take a while (bounded).
        var candidates: [String] = []
        let deadline = ContinuousClock.now + .seconds(300)
        while candidates.isEmpty, ContinuousClock.now < deadline {
            candidates = results.all.filter { $0.finalized && $0.storeAudio }.map(\.conversationID)
            if candidates.isEmpty { try await Task.sleep(for: .seconds(1)) }
        }
        guard let conversation = candidates.last else {
            logger.warning("fault run: no finished conversation with stored audio yet; the job fault restarts the server only")
            server.terminate()
            try await server.start()
            return
        }
        // Queued as an operator would: a busy or briefly unavailable server (429, 503) is asked again.
        var response: SimpleHTTPResponse?
        let askUntil = ContinuousClock.now + .seconds(60)
        repeat {
            if let answer = try? SimpleHTTPClient.request(method: "POST", url: server.baseURL + "/v1/conversations/\(conversation)/diarize?provider=energy",
                                                          body: [], token: server.adminKey) {
                response = answer
            }
            if let status = response?.status, status == 202 || (400..<500).contains(status) && status != 429 { break }
            try await Task.sleep(for: .seconds(1))
        } while ContinuousClock.now < askUntil
        if let response, response.status == 202, let id = (response.json() as? [String: Any])?["id"] as? String {
            jobs.withLock { $0.append(id) }
        } else {
            logger.warning("fault run: re-diarization not queued", metadata: ["status": "\(response?.status ?? 0)"])
        }
        if jobRestarts.add(1, ordering: .relaxed).newValue % 2 == 0 { server.kill() } else { server.terminate() }
        try await server.start()
    }

    private func keep(_ task: Task<Void, Never>) {
        background.withLock { $0.append(task) }
    }

    func waitForBackgroundWork() async {
        for task in background.withLock({ $0 }) { await task.value }
    }

    /// Jobs that answer 404 or have not finished within `timeoutSeconds`.
    func unfinishedJobs(timeoutSeconds: Double) async -> [String] {
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        var pending = Set(jobIDs)
        var vanished: [String] = []
        while !pending.isEmpty, ContinuousClock.now < deadline {
            for id in pending {
                guard let response = try? SimpleHTTPClient.get(server.baseURL + "/v1/diarization-jobs/\(id)", token: server.adminKey, timeoutSeconds: 5) else { continue }
                if response.status == 404 {
                    vanished.append("\(id): 404")
                    pending.remove(id)
                } else if let status = (response.json() as? [String: Any])?["status"] as? String, status == "done" || status == "failed" {
                    pending.remove(id)
                }
            }
            if !pending.isEmpty { try? await Task.sleep(for: .seconds(1)) }
        }
        return vanished + pending.map { "\($0): not finished within \(Int(timeoutSeconds)) s" }
    }
}
