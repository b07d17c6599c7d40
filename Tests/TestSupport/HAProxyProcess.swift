import ChildProcesses
import Foundation
import Glibc

/// Debian's HAProxy in front of servers on loopback, configured as deploy/fleet/haproxy.cfg is in
/// what matters to a device: least connections, health checks on `/readyz`, WebSocket tunnels that
/// last, sessions to a server marked down cut at once, and a failed connect sent to another server.
public final class HAProxyProcess: Sendable {
    public let port: Int
    private let process: Subprocess
    private let folder: URL

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public static var isInstalled: Bool { executable != nil }

    private static var executable: String? {
        ["/usr/sbin/haproxy", "/usr/bin/haproxy"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    public init(backendPorts: [Int]) throws {
        guard let executable = Self.executable else { throw Failure(description: "haproxy is not installed (scripts/setup installs it)") }
        port = try ServerProcess.freePort()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-haproxy-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let servers = backendPorts.enumerated().map { index, backend in
            "    server s\(index) 127.0.0.1:\(backend) check inter 300ms fall 2 rise 2 on-marked-down shutdown-sessions"
        }.joined(separator: "\n")
        let config = """
            global
                maxconn 4096
            defaults
                mode http
                timeout connect 2s
                timeout client 60s
                timeout server 60s
                timeout tunnel 1h
                timeout client-fin 5s
                option redispatch
                retries 3
            frontend listen
                bind 127.0.0.1:\(port)
                default_backend speakersync
            backend speakersync
                balance leastconn
                option httpchk GET /readyz
                http-check expect status 200
            \(servers)

            """
        let file = folder.appendingPathComponent("haproxy.cfg")
        try config.write(to: file, atomically: true, encoding: .utf8)
        process = try Subprocess(Subprocess.Configuration(executable: executable, arguments: ["-f", file.path, "-db"]))
        for _ in 0..<100 {
            if !process.isRunning { throw Failure(description: "haproxy exited with \(process.terminationStatus)") }
            if let connection = try? RawConnection(port: port, timeoutSeconds: 1) {
                _ = connection
                return
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw Failure(description: "haproxy did not listen on \(port)")
    }

    public func stop() {
        if process.isRunning {
            process.signal(SIGTERM)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    deinit { stop() }
}
