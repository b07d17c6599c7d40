import ArgumentParser
import Foundation
import Logging
import ProviderIsolation
import SpeakerSyncServer
import WebSocketTransport

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the SpeakerSync server until interrupted.")

    @OptionGroup var server: ServerOptions

    @Option(name: .customLong("log-format"), help: ArgumentHelp(
        "text (lines for people) or json (one JSON object per line: timestamp, level, label, message, metadata; for log shippers).",
        valueName: "format"))
    var logFormat: LogFormatOption = .text

    func run() async throws {
        if logFormat == .json {
            // Every logger made from here on (the server's components, provider workers' forwarded lines)
            // writes JSON; only serve sets this, once, before its first logger.
            LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        }
        if ProcessInfo.processInfo.environment["SPEAKERSYNC_EXIT_WITH_PARENT"] == "1" { try ParentLifetime.exitWithParent() }
        let config = try server.makeConfig()
        // Checked before the embedded PostgreSQL starts (seconds): a taken port is the commonest reason
        // serve cannot start, and lws itself reports it only in a log line. The transport says so too
        // if the port is taken in between.
        if let problem = ListenPortProbe.problem(host: config.host, port: config.port) { throw CommandFailure(problem) }
        let logger = makeLogger(level: server.logLevel)
        // Caught from here on: a SIGTERM that came while the server started (an orchestrator stopping it
        // as soon as it logged "listening") must stop it, not be lost.
        let termination = TerminationSignals()
        let app = SpeakerSyncApplication(config: config, logger: logger)
        let port = try app.start()
        let (ws, http) = server.isTLS ? ("wss", "https") : ("ws", "http")
        logger.info("SpeakerSync listening", metadata: [
            "ws": "\(ws)://\(server.host):\(port)/v1/listen", "http": "\(http)://\(server.host):\(port)/v1/conversations"])
        // For the client commands on this machine (token, conversations, stream…): where it listens and
        // where its admin key is, whatever --port and --data-dir chose.
        let localHost = ["0.0.0.0", "::", ""].contains(server.host) ? "127.0.0.1" : server.host
        let record = LocalServerRecord(
            url: "\(http)://\(localHost.contains(":") ? "[\(localHost)]" : localHost):\(port)", pid: getpid(),
            adminKeyFile: config.access.adminKeyFile ?? AccessConfig.defaultAdminKeyFile(dataDirectory: config.dataDirectory),
            dataDirectory: config.dataDirectory)
        record.write()
        await termination.wait()
        logger.info("shutting down")
        app.shutdown()
        record.remove()
    }
}

/// Suspends until SIGINT or SIGTERM (installed now: see `TerminationSignals`).
func waitForTermination() async {
    await TerminationSignals().wait()
}

func makeLogger(level: LogLevelOption, label: String = "speakersync") -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = level.level
    return logger
}
