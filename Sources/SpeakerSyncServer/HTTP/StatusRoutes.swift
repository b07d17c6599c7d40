import Foundation
import PluginHost
import WebSocketTransport

/// The server's own state: the probes (`/livez`, `/readyz`, `/healthz`), `/metrics`,
/// `/v1/providers` and `/v1/whoami`.
struct StatusRoutes {
    let services: APIServices
    let gate: AccessGate
    let metrics: ServerMetrics

    static func register(in table: inout RouteTable, services: APIServices, gate: AccessGate, metrics: ServerMetrics) {
        let routes = StatusRoutes(services: services, gate: gate, metrics: metrics)
        // The probes answer at once from memory (the body and the text checks are not looked at);
        // `/healthz` with a credential waits for a worker, which tells the admin more.
        table.add(.get, "/livez", name: "live", access: .open, inline: { _ in true }) { _ in APIHandler.json(["status": "ok"]) }
        table.add(.get, "/readyz", name: "ready", access: .open, inline: { _ in true }) { _ in routes.readiness() }
        table.add(.get, "/healthz", name: "health", access: .open, inline: { $0.headers["authorization"] == nil }) { context in
            // Worker pids, plugin paths and server-wide memory are the operator's: a device learns up or not.
            routes.health(detailed: context.caller?.isAdmin == true)
        }
        // Server-wide figures (every device's sessions, providers, jobs) are the operator's.
        table.add(.get, "/metrics", name: "metrics",
                  access: .admin(refusal: "/metrics is for the admin key; device tokens cannot read server-wide figures")) { _ in
            routes.exposition()
        }
        table.add(.get, "/v1/providers", name: "providers", access: .credential) { _ in routes.providers() }
        table.add(.get, "/v1/whoami", name: "whoami", access: .credential) { context in try routes.whoami(context.principal) }
    }

    /// 200 when ready, 503 with the reason otherwise (Kubernetes' readiness convention).
    func readiness() -> HTTPResponse {
        guard let readiness = services.readiness else {
            // Servers built without a probe (tests) check on the spot, with the connection's deadlines.
            do {
                try services.reader.checkHealth()
                return APIHandler.json(["status": "ok", "database": "ok"])
            } catch {
                return APIHandler.json(["status": "unavailable", "database": "unavailable"], status: 503, headers: [("retry-after", "2")])
            }
        }
        let status = readiness.status
        var body: [String: Any] = ["status": status.ready ? "ok" : "unavailable", "database": status.database]
        if status.leaseLapsed { body["lease"] = "lapsed" }
        if status.draining { body["status"] = "stopping" }
        return APIHandler.json(body, status: status.ready ? 200 : 503, headers: status.ready ? [] : [("retry-after", "2")])
    }

    func health(detailed: Bool) -> HTTPResponse {
        let readiness = readiness()
        guard detailed, readiness.status == 200 else { return readiness }
        var health: [String: Any] = ["status": "ok", "database": "ok"]
        let memory = residentMemory()
        if let total = memory.total { health["resident_bytes"] = total }
        if let server = memory.server { health["server_resident_bytes"] = server }
        health["provider_workers"] = memory.workers.map { worker, resident -> [String: Any] in
            ["pid": Int(worker.processID), "plugin": worker.pluginPath, "sessions": worker.sessionCount,
             "resident_bytes": resident as Any? ?? NSNull()]
        }
        return APIHandler.json(health)
    }

    /// Resident memory of this process and of each provider worker (nil where it cannot be read), and
    /// their sum: the workers count too, since that is where sessions' models and state live.
    private func residentMemory() -> (server: Int?, workers: [(ProviderWorkerInfo, Int?)], total: Int?) {
        let server = ProcessMemory.residentBytes()
        let workers = services.providers.workers.map { ($0, ProcessMemory.residentBytes(processID: $0.processID)) }
        let readable = ([server] + workers.map(\.1)).compactMap { $0 }
        return (server, workers, readable.isEmpty ? nil : readable.reduce(0, +))
    }

    func exposition() -> HTTPResponse {
        metrics.set(gauge: "speakersync_resident_memory_bytes", [:], Double(residentMemory().total ?? 0))
        return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(metrics.render().utf8))
    }

    func providers() -> HTTPResponse {
        let providers = services.providers
        return APIHandler.json([
            "providers": providers.providers.map { provider -> [String: Any] in
                var object: [String: Any] = [
                    "id": provider.id, "name": provider.name, "version": provider.version,
                    "description": provider.description, "latency_class": provider.latencyClass.rawValue,
                    "licence": provider.licence, "requirements": provider.requirements, "measured": provider.measured,
                ]
                switch provider.kind {
                case .builtin: object["kind"] = "builtin"
                case .plugin(let path): object["kind"] = "plugin"; object["path"] = path
                }
                switch providers.status(of: provider.id) {
                case .available:
                    object["available"] = true
                case .unavailable(let reason, let retryAfter):
                    object["available"] = false
                    object["unavailable_reason"] = reason
                    if let retryAfter { object["retry_after_seconds"] = Int(retryAfter.rounded(.up)) }
                }
                return object
            },
            "isolation": services.isolation,
            "failed": providers.failures.map { failure -> [String: Any] in
                ["path": failure.path, "code": failure.code.rawValue, "reason": failure.message]
            },
        ])
    }

    /// What the presented credential acts as (the console adapts to it).
    func whoami(_ principal: Principal) -> HTTPResponse {
        APIHandler.json([
            "role": principal.isAdmin ? "admin" : "device",
            "device_id": principal.deviceID as Any? ?? NSNull(),
            "auth": gate.config.mode == .required ? "required" : "off",
            "default_provider": services.defaultProvider as Any? ?? NSNull(),
        ])
    }
}
