import Foundation
import Glibc
import PluginHost
import SpeakerSyncAudio
import Testing
import TestSupport
@testable import ProviderIsolation

/// The provider sandbox (docs/security.md, "The provider sandbox") on real workers: the test-only
/// `forbidden` plugin (Tests/TestSupport/forbidden_plugin.c) tries to read a root-only secret (the
/// admin key file's stand-in), connect to the test PostgreSQL cluster's Unix socket, open an internet
/// socket, execute /bin/sh and ptrace the server, and reports each outcome in its create error; the
/// real `energy` provider beside it still diarizes real audio exactly as in process.
@Suite(.serialized) struct ProviderSandboxTests {
    let folder: URL

    init() throws {
        folder = try TestPlugins.folder(copying: ["speakersync-energy"], faulty: false, forbidden: true)
    }

    /// A file only root may read (mode 0600), like the server's admin key file.
    func secretFile() throws -> URL {
        let secrets = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-secret-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        let file = secrets.appendingPathComponent("admin.key")
        try Data("not for plugins".utf8).write(to: file)
        #expect(chmod(file.path, 0o600) == 0)
        return file
    }

    /// The test cluster's Unix socket (PostgreSQL listens in its data folder).
    var postgresSocket: String {
        let cluster = TestCluster.shared
        return cluster.dataDirectory.appendingPathComponent(".s.PGSQL.\(cluster.config.port)").path
    }

    /// A folder every local user may write (like /tmp): only Landlock keeps a worker out of it.
    func openFolder() throws -> URL {
        let open = FileManager.default.temporaryDirectory.appendingPathComponent("speakersync-open-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: true)
        #expect(chmod(open.path, 0o1777) == 0)
        return open
    }

    /// Runs the probe and returns its report ("probe own_config=absent … read_file=refused(13) …").
    func probe(_ host: IsolatedProviderHost, secret: URL, ptrace: Bool = true, writeInto open: URL? = nil) throws -> String {
        var options = #"{"probe":true,"ptrace":\#(ptrace),"read_file":"\#(secret.path)","connect_unix":"\#(postgresSocket)","write_temp":true"#
        if let open { options += #","write_file":"\#(open.appendingPathComponent("from-a-plugin").path)""# }
        options += #","other_pids":"\#(host.workerProcessIDs.map(String.init).joined(separator: ","))"}"#
        let driver = try SessionDriver(host: host, provider: "forbidden", options: options)
        #expect(driver.wait { $0.failure != nil })
        driver.close()
        return driver.failure?.message ?? ""
    }

    @Test func everyForbiddenActionIsRefusedWhileARealProviderStillDiarizes() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = try secretFile()
        defer { try? FileManager.default.removeItem(at: secret.deletingLastPathComponent()) }
        let open = try openFolder()
        defer { try? FileManager.default.removeItem(at: open) }
        #expect(FileManager.default.fileExists(atPath: postgresSocket))
        // Without a sandbox the same probe gets through (the test proves something).
        var openConfig = Hosts.config()
        openConfig.sandbox.enabled = false
        let unconfined = try IsolatedProviderHost(directory: folder.path, config: openConfig, logger: Hosts.logger)
        let unconfinedReport = try probe(unconfined, secret: secret, ptrace: false, writeInto: open)
        unconfined.shutdown()
        #expect(unconfinedReport.contains("read_file=allowed"), "\(unconfinedReport)")
        #expect(unconfinedReport.contains("connect_unix=allowed"), "\(unconfinedReport)")
        #expect(unconfinedReport.contains("inet_socket=allowed"), "\(unconfinedReport)")
        #expect(unconfinedReport.contains("execve=allowed"), "\(unconfinedReport)")
        #expect(unconfinedReport.contains("write_file=allowed"), "\(unconfinedReport)")
        #expect(unconfinedReport.contains("other_worker=allowed"), "\(unconfinedReport)")

        let host = try IsolatedProviderHost(directory: folder.path, config: Hosts.config(), logger: Hosts.logger)
        defer { host.shutdown() }
        #expect(host.providers.allSatisfy { $0.unavailableReason == nil }, "\(host.providers.map(\.unavailableReason))")
        let report = try probe(host, secret: secret, writeInto: open)
        let landlock = Syscall.landlockABI() > 0
        if geteuid() == 0 || landlock {
            #expect(report.contains("read_file=refused(\(EACCES))"), "\(report)")
        }
        #expect(report.contains("connect_unix=refused(\(EPERM))"), "\(report)")
        #expect(report.contains("inet_socket=refused(\(EPERM))"), "\(report)")
        #expect(report.contains("execve=refused(\(EPERM))"), "\(report)")
        #expect(report.contains("ptrace=refused(\(EPERM))"), "\(report)")
        // Another worker's /proc memory and environment: they belong to root once a worker is undumpable.
        #expect(report.contains("other_worker=refused(\(EACCES))"), "\(report)")
        if landlock {
            // A folder anyone may write is shut; the worker's own temporary folder is not.
            #expect(report.contains("write_file=refused(\(EACCES))"), "\(report)")
            #expect(report.contains("write_temp=allowed"), "\(report)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: open.path).isEmpty)
        }
        #expect(!report.replacingOccurrences(of: "write_temp=allowed", with: "").contains("allowed"), "\(report)")

        // energy, in its own sandboxed worker, on real audio: the same turns as in process.
        let audio: [Float]
        if let sample = TestData.file("sample/sample.wav") {
            audio = try StreamingResampler.resample(WAVFile.decode(Data(contentsOf: sample))).samples
        } else {
            audio = Hosts.tones(seconds: 20)
        }
        var turns: [[ProviderTurn]] = []
        for provider in [host as any ProviderHost, PluginRegistry(directory: folder.path, logger: Hosts.logger)] {
            let driver = try SessionDriver(host: provider, provider: "energy", options: #"{"threshold":1.2}"#)
            driver.stream(audio)
            driver.finalize()
            #expect(driver.wait { $0.finalResult != nil || $0.failure != nil })
            #expect(driver.failure == nil)
            turns.append(driver.turns)
            driver.close()
        }
        #expect(!turns[0].isEmpty)
        #expect(turns[0] == turns[1])
    }

    /// Every thread of every worker, as the kernel reports it from outside: no capabilities,
    /// no_new_privs, a seccomp filter, and (as root) the provider account's uid and gid.
    @Test func everyWorkerThreadRunsConfined() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let host = try IsolatedProviderHost(directory: folder.path, config: Hosts.config(), logger: Hosts.logger)
        defer { host.shutdown() }
        // A session, so the plugin's own threads exist too.
        let driver = try SessionDriver(host: host, provider: "energy")
        driver.stream(Hosts.tones(seconds: 2))
        #expect(driver.wait { $0.processedCount > 0 })
        let expected: AppliedSandbox
        if geteuid() == 0 {
            let account = try #require(Syscall.account(named: ProviderSandboxConfig.default.user))
            #expect(account.uid != 0)
            expected = AppliedSandbox(account: (account.uid, account.gid), seccomp: true, network: false)
        } else {
            expected = AppliedSandbox(account: nil, seccomp: true, network: false)
        }
        #expect(host.workerProcessIDs.count == 2)
        var threads = 0
        for pid in host.workerProcessIDs {
            for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") {
                guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
                #expect(ThreadCredentials.problem(in: ThreadCredentials.fields(status), expected) == nil, "worker \(pid) thread \(task)")
                threads += 1
            }
        }
        #expect(threads > 2)
        driver.close()
    }

    /// A provider declared to need the network (Falcon's online activation) may open internet sockets;
    /// everything else stays refused.
    @Test func aNetworkProviderMayOpenInternetSocketsOnly() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = try secretFile()
        defer { try? FileManager.default.removeItem(at: secret.deletingLastPathComponent()) }
        var config = Hosts.config()
        config.sandbox.networkProviders = ["forbidden"]
        let host = try IsolatedProviderHost(directory: folder.path, config: config, logger: Hosts.logger)
        defer { host.shutdown() }
        let report = try probe(host, secret: secret)
        #expect(report.contains("inet_socket=allowed"), "\(report)")
        #expect(report.contains("connect_unix=refused(\(EPERM))"), "\(report)")
        #expect(report.contains("execve=refused(\(EPERM))"), "\(report)")
        #expect(report.contains("ptrace=refused(\(EPERM))"), "\(report)")
    }

    /// Each worker is sent its own providers' config sections and no other, and its plugin's init()
    /// already runs as the provider account: the `forbidden` plugin sees its own section, not Falcon's
    /// (with its AccessKey), and cannot read a root-only file from init.
    @Test func aWorkerGetsItsOwnProvidersConfigurationOnly() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = try secretFile()
        defer { try? FileManager.default.removeItem(at: secret.deletingLastPathComponent()) }
        var config = Hosts.config()
        config.providerConfiguration = ProviderConfiguration(sections: [
            "forbidden": #"{"init_read_file":"\#(secret.path)"}"#, "falcon": #"{"access_key":"pv-not-for-forbidden"}"#,
        ])
        // Without a sandbox init runs as the server (root here) and reads the file: the probe works.
        var unconfinedConfig = config
        unconfinedConfig.sandbox.enabled = false
        let unconfined = try IsolatedProviderHost(directory: folder.path, config: unconfinedConfig, logger: Hosts.logger)
        let unconfinedReport = try probe(unconfined, secret: secret, ptrace: false)
        unconfined.shutdown()
        #expect(unconfinedReport.contains("own_config=present other_config=absent init_read_file=allowed"), "\(unconfinedReport)")

        let host = try IsolatedProviderHost(directory: folder.path, config: config, logger: Hosts.logger)
        defer { host.shutdown() }
        let report = try probe(host, secret: secret)
        #expect(report.contains("own_config=present other_config=absent"), "\(report)")
        if geteuid() == 0 || Syscall.landlockABI() > 0 {
            #expect(report.contains("init_read_file=refused(\(EACCES))"), "\(report)")
        }
        // The worker no longer has the file's path, and no PICOVOICE_ACCESS_KEY, in its environment.
        for pid in host.workerProcessIDs {
            let environment = try String(contentsOfFile: "/proc/\(pid)/environ", encoding: .utf8)
            #expect(!environment.contains("pv-not-for-forbidden"))
            #expect(!environment.contains("PICOVOICE_ACCESS_KEY"))
            #expect(environment.contains("TMPDIR="))
        }
    }

    /// A root server without an account for its workers does not load their plugins at all (their code
    /// would run as root): each file is listed as failed with the reason, and a session is refused.
    @Test func aWorkerWithoutItsAccountLoadsNoPlugin() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        guard geteuid() == 0 else { return }
        var config = Hosts.config()
        config.sandbox.user = "speakersync-no-such-user"
        config.sandbox.createsUser = false
        let host = try IsolatedProviderHost(directory: folder.path, config: config, logger: Hosts.logger)
        defer { host.shutdown() }
        #expect(!host.providers.contains { $0.id == "energy" || $0.id == "forbidden" })
        let failure = try #require(host.failures.first { $0.path.hasSuffix("libspeakersync-energy.so") })
        #expect(failure.code == .sandboxFailed)
        #expect(failure.message.hasPrefix("the provider sandbox could not be applied (sandbox_account_missing): user speakersync-no-such-user does not exist"),
                "\(failure.message)")
        #expect(throws: PluginError.self) { try SessionDriver(host: host, provider: "energy") }
    }

    @Test func aThreadStatusIsCheckedFieldByField() {
        let confined = """
            Name:\tworker
            Uid:\t998\t998\t998\t998
            Gid:\t997\t997\t997\t997
            Groups:\t
            CapInh:\t0000000000000000
            CapPrm:\t0000000000000000
            CapEff:\t0000000000000000
            CapBnd:\t0000000000000000
            CapAmb:\t0000000000000000
            NoNewPrivs:\t1
            Seccomp:\t2
            """
        let applied = AppliedSandbox(account: (998, 997), seccomp: true, network: false)
        #expect(ThreadCredentials.problem(in: ThreadCredentials.fields(confined), applied) == nil)
        let root = confined.replacingOccurrences(of: "Uid:\t998\t998\t998\t998", with: "Uid:\t998\t0\t998\t998")
        #expect(ThreadCredentials.problem(in: ThreadCredentials.fields(root), applied) == "Uid is 998\t0\t998\t998")
        let bounding = confined.replacingOccurrences(of: "CapBnd:\t0000000000000000", with: "CapBnd:\t000001ffffffffff")
        #expect(ThreadCredentials.problem(in: ThreadCredentials.fields(bounding), applied) == "CapBnd is 000001ffffffffff, not empty")
        let unfiltered = confined.replacingOccurrences(of: "Seccomp:\t2", with: "Seccomp:\t0")
        #expect(ThreadCredentials.problem(in: ThreadCredentials.fields(unfiltered), applied) == "Seccomp is 0, not 2 (filter)")
        let groups = confined.replacingOccurrences(of: "Groups:\t", with: "Groups:\t0 27")
        #expect(ThreadCredentials.problem(in: ThreadCredentials.fields(groups), applied) == "supplementary groups 0 27 remain")
        // Not root: the bounding set and the ids are the server's own.
        let unchanged = AppliedSandbox(account: nil, seccomp: true, network: false)
        #expect(ThreadCredentials.problem(in: ThreadCredentials.fields(bounding), unchanged) == nil)
    }
}
