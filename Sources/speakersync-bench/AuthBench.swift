import ArgumentParser
import Dispatch
import Foundation
import Logging
import SpeakerSyncClient
import SpeakerSyncServer

/// What checking credentials costs: the in-memory check itself (SHA-256 of the presented text, a
/// lookup by id, a constant-time compare) against a book of many tokens, and an HTTP request through a
/// real server with `--auth required` (a device token) beside `--auth off`, alternated runs, medians.
struct AuthBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth", abstract: "Credential checks: µs per check in memory, HTTP round trip with auth required vs off.")

    @Option(help: "Device tokens in the book.") var tokens = 10_000
    @Option(help: "In-memory checks to time.") var checks = 200_000
    @Option(help: "HTTP requests per run (one connection each).") var requests = 1_000
    @Option(help: "Route to request (the default reads no database, so only the transport and the check differ).") var path = "/v1/providers"
    @Option(help: "Runs of each mode, alternated.") var repeats = 3
    @Option(name: .customLong("database-url")) var databaseURL: String?

    func run() throws {
        try checkBook()
        var logger = Logger(label: "bench.auth")
        logger.logLevel = .error
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-auth-\(UUID().uuidString.prefix(8))")
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(atPath: AccessConfig.defaultAdminKeyFile(dataDirectory: folder.path))
        }
        var results: [AccessConfig.Mode: [(p50: Double, p99: Double)]] = [:]
        for round in 0..<repeats {
            // Alternate which mode goes first, so warm-up and drift fall on both.
            for mode in round % 2 == 0 ? [AccessConfig.Mode.required, .off] : [.off, .required] {
                var config = ServerConfig.default
                config.port = 0
                config.databaseURL = databaseURL
                config.dataDirectory = folder.path
                config.access.mode = mode
                config.access.environmentAdminKey = "bench-admin-key-" + UUID().uuidString
                config.access.requestsPerSecond = 0
                config.providerIsolation.mode = .none // providers play no part in what is measured
                let app = SpeakerSyncApplication(config: config, logger: logger)
                let port = try app.start()
                let token = mode == .required ? try app.createDeviceToken(deviceID: "bench") : nil
                var latencies: [Double] = []
                for _ in 0..<requests {
                    let start = DispatchTime.now().uptimeNanoseconds
                    let response = try SimpleHTTPClient.get("http://127.0.0.1:\(port)\(path)", token: token)
                    latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3)
                    guard response.status == 200 else { throw ValidationError("HTTP \(response.status): \(response.text)") }
                }
                app.shutdown()
                latencies.sort()
                results[mode, default: []].append((latencies[latencies.count / 2], latencies[latencies.count * 99 / 100]))
            }
        }
        print("HTTP GET \(path), \(requests) requests per run (a new connection each), \(repeats) alternated runs, medians")
        print("auth       p50 µs    p99 µs")
        for mode in [AccessConfig.Mode.required, .off] {
            let runs = results[mode] ?? []
            func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
            print(String(format: "%-8@ %8.0f %9.0f", mode.rawValue as NSString, median(runs.map(\.p50)), median(runs.map(\.p99))))
        }
    }

    /// µs per in-memory check of a valid token, a forged one (right id, wrong secret) and the admin key.
    private func checkBook() throws {
        let book = CredentialBook(environmentAdminKey: "bench-environment-admin-key-0123456789")
        var entries: [CredentialBook.Entry] = []
        var texts: [String] = []
        for index in 0..<tokens {
            let token = try Credential.generate(.deviceToken)
            entries.append(.init(id: token.id, kind: .deviceToken, deviceID: "device-\(index)", digest: token.digest))
            texts.append(token.text)
        }
        book.replace(with: entries)
        let forged = texts.map { String($0.dropLast(64)) + String(repeating: "0", count: 64) }
        for (name, presented) in [("valid token", texts), ("forged secret", forged), ("admin key", ["bench-environment-admin-key-0123456789"])] {
            var accepted = 0
            let start = DispatchTime.now().uptimeNanoseconds
            for index in 0..<checks {
                if case .success = book.authenticate(presented[index % presented.count]) { accepted += 1 }
            }
            let micros = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e3 / Double(checks)
            print(String(format: "in-memory check, %@ (%d tokens in the book): %.2f µs per check, %d of %d accepted",
                         name as NSString, tokens, micros, accepted, checks))
        }
    }
}
