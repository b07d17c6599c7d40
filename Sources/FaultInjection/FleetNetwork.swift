import ChildProcesses
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A command run to its end, its output kept (ip, nft, initdb, useradd).
enum FleetCommand {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `argv` and returns its standard output; throws with its output when it exits non-zero
    /// (unless `allowFailure`).
    @discardableResult
    static func run(_ argv: [String], input: String? = nil, allowFailure: Bool = false) throws -> String {
        var configuration = Subprocess.Configuration(executable: argv[0], arguments: Array(argv.dropFirst()))
        configuration.workingDirectory = "/"
        let done = try Subprocess.run(configuration, input: input.map { Data($0.utf8) })
        let text = done.standardOutputText
        if !done.exit.succeeded, !allowFailure {
            throw Failure(description: "\(argv.joined(separator: " ")) ended with \(done.exit): "
                          + done.standardErrorText.trimmingCharacters(in: .whitespacesAndNewlines) + text)
        }
        return text
    }

    /// The first of `candidates` that is an executable file.
    static func locate(_ candidates: [String]) throws -> String {
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Failure(description: "none of \(candidates.joined(separator: ", ")) is an executable")
        }
        return found
    }
}

/// The fleet harness's network: a Linux bridge in the root namespace (10.77.0.1, where the harness
/// and its devices live) and one network namespace per machine, each joined to the bridge by a
/// veth pair: PostgreSQL (`ss-pg`), three servers (`ss-a`, `ss-b`, `ss-c`) and HAProxy (`ss-lb`).
/// Every device has an address of its own on the bridge (its upstream connections are made from
/// it), so a device can be cut off by address.
///
/// Faults are nftables rules in the namespaces, on the veth's ingress and egress hooks (netdev
/// family): packets are dropped on the wire, so both ends see silence, as with a real partition
/// (an output-hook drop would tell the sender at once, with EPERM).
public final class FleetNetwork: Sendable {
    public static let bridge = "ss-br0"
    public static let harnessAddress = "10.77.0.1"
    public static let postgresAddress = "10.77.0.2"
    public static let balancerAddress = "10.77.0.20"
    public static let postgresNamespace = "ss-pg"
    public static let balancerNamespace = "ss-lb"
    /// The servers' names (HAProxy's too), namespaces and addresses.
    public static let servers: [(name: String, namespace: String, address: String)] = [
        ("a", "ss-a", "10.77.0.11"), ("b", "ss-b", "10.77.0.12"), ("c", "ss-c", "10.77.0.13"),
    ]
    static let namespaces = [postgresNamespace] + servers.map(\.namespace) + [balancerNamespace]
    /// nftables table the faults live in (in a namespace).
    static let faultTable = "ss_fleet"

    /// Device `index`'s own address (10.77.0.101 on).
    public static func deviceAddress(_ index: Int) -> String { "10.77.0.\(101 + index)" }

    let ip: String
    let nft: String
    private let deviceCount: Int

    public init(deviceCount: Int) throws {
        precondition(deviceCount <= 100, "at most 100 devices have an address of their own")
        ip = try FleetCommand.locate(["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"])
        nft = try FleetCommand.locate(["/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft"])
        self.deviceCount = deviceCount
    }

    /// `ip netns exec <namespace>`: what a process of that machine is started through.
    public func launcher(_ namespace: String) -> [String] { [ip, "netns", "exec", namespace] }

    /// Host side and namespace side of a namespace's veth pair ("ss-a" → "ss-a-h", "ss-a-n").
    static func veth(_ namespace: String) -> (host: String, inside: String) { (namespace + "-h", namespace + "-n") }

    static func address(of namespace: String) -> String {
        if namespace == postgresNamespace { return postgresAddress }
        if namespace == balancerNamespace { return balancerAddress }
        return servers.first { $0.namespace == namespace }!.address
    }

    /// Builds it all, after removing what a crashed earlier run left.
    public func up() throws {
        Self.removeAll(ip: ip)
        try FleetCommand.run([ip, "link", "add", Self.bridge, "type", "bridge"])
        try FleetCommand.run([ip, "addr", "add", Self.harnessAddress + "/24", "dev", Self.bridge])
        for index in 0..<deviceCount {
            try FleetCommand.run([ip, "addr", "add", Self.deviceAddress(index) + "/24", "dev", Self.bridge])
        }
        try FleetCommand.run([ip, "link", "set", Self.bridge, "up"])
        for namespace in Self.namespaces {
            let (host, inside) = Self.veth(namespace)
            try FleetCommand.run([ip, "netns", "add", namespace])
            try FleetCommand.run([ip, "link", "add", host, "type", "veth", "peer", "name", inside])
            try FleetCommand.run([ip, "link", "set", inside, "netns", namespace])
            try FleetCommand.run([ip, "link", "set", host, "master", Self.bridge])
            try FleetCommand.run([ip, "link", "set", host, "up"])
            try FleetCommand.run([ip, "-n", namespace, "addr", "add", Self.address(of: namespace) + "/24", "dev", inside])
            try FleetCommand.run([ip, "-n", namespace, "link", "set", inside, "up"])
            try FleetCommand.run([ip, "-n", namespace, "link", "set", "lo", "up"])
        }
        // The devices' partitions: a set of addresses HAProxy's namespace drops, both ways.
        let (_, lbInside) = Self.veth(Self.balancerNamespace)
        try nftables(in: Self.balancerNamespace, """
            table netdev \(Self.faultTable) {
                set cut { type ipv4_addr; }
                chain from_devices { type filter hook ingress device "\(lbInside)" priority 0; ip saddr @cut drop; }
                chain to_devices { type filter hook egress device "\(lbInside)" priority 0; ip daddr @cut drop; }
            }
            """)
    }

    /// Removes the namespaces (ending what still runs in them), the veths and the bridge.
    public func tearDown() { Self.removeAll(ip: ip) }

    /// What a run (this one, or a crashed earlier one) left: the processes in the fleet's
    /// namespaces (which only this harness starts) are SIGKILLed by pid, then the namespaces, veth
    /// pairs and the bridge deleted. Quiet when there is nothing.
    public static func removeAll(ip: String? = nil) {
        guard let ip = ip ?? (try? FleetCommand.locate(["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"])) else { return }
        let existing = Set(((try? FleetCommand.run([ip, "netns", "list"], allowFailure: true)) ?? "")
            .split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        for namespace in namespaces where existing.contains(namespace) {
            let pids = ((try? FleetCommand.run([ip, "netns", "pids", namespace], allowFailure: true)) ?? "")
                .split(whereSeparator: \.isWhitespace).compactMap { pid_t($0) }
            for pid in pids { kill(pid, SIGCONT); kill(pid, SIGKILL) }
            // Let them go before the namespace does (their sockets hold it).
            let deadline = Date().addingTimeInterval(5)
            while pids.contains(where: { kill($0, 0) == 0 && ProcessStatus.residentBytes(of: $0) != nil }), Date() < deadline {
                usleep(50_000)
            }
            _ = try? FleetCommand.run([ip, "netns", "del", namespace], allowFailure: true)
        }
        for namespace in namespaces where FileManager.default.fileExists(atPath: "/sys/class/net/\(veth(namespace).host)") {
            _ = try? FleetCommand.run([ip, "link", "del", veth(namespace).host], allowFailure: true)
        }
        if FileManager.default.fileExists(atPath: "/sys/class/net/\(bridge)") {
            _ = try? FleetCommand.run([ip, "link", "del", bridge], allowFailure: true)
        }
    }

    private func nftables(in namespace: String, _ script: String) throws {
        try FleetCommand.run(launcher(namespace) + [nft, "-f", "-"], input: script)
    }

    /// Cuts server `namespace` off from PostgreSQL (and only from it): packets between them are
    /// dropped on the server's veth, both ways.
    public func partitionFromPostgres(_ namespace: String) throws {
        let (_, inside) = Self.veth(namespace)
        try nftables(in: namespace, """
            table netdev \(Self.faultTable) {
                chain from_postgres { type filter hook ingress device "\(inside)" priority 0; ip saddr \(Self.postgresAddress) drop; }
                chain to_postgres { type filter hook egress device "\(inside)" priority 0; ip daddr \(Self.postgresAddress) drop; }
            }
            """)
    }

    public func healFromPostgres(_ namespace: String) {
        _ = try? FleetCommand.run(launcher(namespace) + [nft, "delete", "table", "netdev", Self.faultTable], allowFailure: true)
    }

    /// Drops every packet between the device at `address` and HAProxy.
    public func partitionDevice(_ address: String) throws {
        try FleetCommand.run(launcher(Self.balancerNamespace) + [nft, "add", "element", "netdev", Self.faultTable, "cut", "{ \(address) }"])
    }

    public func healDevice(_ address: String) {
        _ = try? FleetCommand.run(launcher(Self.balancerNamespace) + [nft, "delete", "element", "netdev", Self.faultTable, "cut", "{ \(address) }"],
                                  allowFailure: true)
    }
}

/// A long-running child of the harness (PostgreSQL, HAProxy), started from a thread that lives as
/// long as this object (its parent-death signal would otherwise fire when a pool thread ends).
final class FleetChild: @unchecked Sendable { // `process` is set once by start() and only read after
    private let parent = ParentThread()
    private var process: Subprocess?
    let name: String

    init(name: String) { self.name = name }

    deinit {
        kill(SIGKILL)
        parent.finish()
    }

    func start(_ argv: [String], environment: [String: String]? = nil, logFile: URL) async throws {
        let started = try await parent.run { () throws -> Subprocess in
            var configuration = Subprocess.Configuration(executable: argv[0], arguments: Array(argv.dropFirst()), environment: environment)
            configuration.workingDirectory = "/"
            return try Subprocess(configuration, appendingOutputTo: logFile)
        }
        process = started
    }

    var isRunning: Bool { process?.isRunning == true }
    var pid: pid_t? { process.flatMap { $0.isRunning ? $0.processIdentifier : nil } }
    var exitStatus: Int32? { process.flatMap { $0.isRunning ? nil : $0.terminationStatus } }

    func kill(_ signal: Int32) {
        guard let process, process.isRunning else { return }
        process.signal(signal)
    }

    /// `signal`, then waits up to `timeoutSeconds` for the exit; SIGKILL after that.
    func stop(signal: Int32 = SIGTERM, timeoutSeconds: Double = 20) {
        guard let process, process.isRunning else { return }
        process.signal(signal)
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while process.isRunning, Date() < deadline { usleep(50_000) }
        if process.isRunning {
            process.signal(SIGKILL)
            process.waitUntilExit()
        }
    }
}
