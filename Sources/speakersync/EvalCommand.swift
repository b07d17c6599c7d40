import ArgumentParser
import Foundation
import SpeakerSyncClient
import SpeakerSyncEval
import SpeakerSyncServer
import WebSocketTransport

struct EvalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Stream recordings through the server as a device would and score the result: DER, JER, WDER, speakers, latency, speed, memory.",
        discussion: """
        Uses the server at --url, or starts one on the embedded default. Each recording needs its words \
        (--words DIR with <id>.json: `speakersync words`, or a synthetic set's words/) and reference \
        turns (--rttm). DER is overlap-scored at collar 0 and 0.25 s with the optimal speaker mapping; \
        live DER scores the turns as they were first published.
        """
    )

    @Option(help: "Diarization provider to evaluate.")
    var provider: String = "speakerkit"

    @Option(name: .customLong("audio"), help: "A .wav file or a folder of them (repeatable).")
    var audio: [String]

    @Option(name: .customLong("rttm"), help: "Reference RTTM file (repeatable).")
    var rttm: [String]

    @Option(name: .customLong("uem"), help: "UEM file of scored regions (repeatable).")
    var uem: [String] = []

    @Option(name: .customLong("words"), help: "Folder of words files <id>.json (without it: turns only, no WDER or label latency).")
    var words: String?

    @Option(name: .customLong("segments"), help: "Folder of device diarization <id>.rttm for provider 'device' (default: the reference turns, an oracle).")
    var segments: String?

    @Option(help: "Stream at this multiple of real time; 0 sends as fast as the server accepts.")
    var speed: Double = 1

    @Option(help: "Recordings streamed at once.")
    var concurrency: Int = 1

    @Option(help: "The start message's options object (JSON), e.g. '{\"num_speakers\": 2}'.")
    var options: String?

    @Option(name: .customLong("shadow"), help: "A provider to run beside --provider on the same audio (repeatable, at most 2): its labels are stored for comparison, and the figures show what it costs the evaluated provider.")
    var shadows: [String] = []

    @Option(help: ArgumentHelp(
        "A running server: http(s)://host:port or ws(s)://host:port, with or without /v1/listen; without it one is started on the embedded default (with TLS when --tls-cert/--tls-key are given).",
        valueName: "url"))
    var url: String?

    @OptionGroup var credential: ClientCredentialOptions
    @OptionGroup var tls: CAFileOption

    @Option(name: .customLong("device-id"), help: "The device the sessions run as. Default: with --url and a device token, the token's device (GET /v1/whoami); else speakersync-eval.")
    var deviceID: String?

    @Option(name: .customLong("start-timeout"), help: "Seconds each recording's session may take to start, whatever its reconnects are doing; then eval stops with the reason.")
    var startTimeout: Double = 60

    @Flag(help: "Print the report as JSON.")
    var json = false

    @Flag(help: "No progress lines on standard error (one per recording otherwise).")
    var quiet = false

    @OptionGroup var server: ServerOptions

    func validate() throws {
        guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
        guard speed >= 0 else { throw ValidationError("--speed must be 0 (as fast as possible) or positive") }
        guard startTimeout > 0 else { throw ValidationError("--start-timeout must be positive") }
        if let url {
            do { _ = try ServerURL(url) } catch { throw ValidationError("--url: \(error)") }
        }
    }

    func run() async throws {
        let recordings: [EvalRecording]
        do {
            recordings = try EvalCorpus.load(EvalCorpusSpec(
                audioPaths: audio, rttmPaths: rttm, uemPaths: uem, wordsDirectory: words, deviceSegmentsDirectory: segments))
        } catch {
            throw CommandFailure("\(error)")
        }
        let logger = makeLogger(level: server.logLevel == .info ? .warning : server.logLevel)
        var app: SpeakerSyncApplication?
        let serverURL: String
        var token = credential.token
        var device = deviceID ?? EvalDevice.defaultID
        // Our own TLS server is usually self-signed: without --ca-file, trust its certificate.
        let caFile = tls.caFile ?? (url == nil ? server.tlsCertificate : nil)
        if let url {
            // The runner adds /v1/listen, and asks /v1/whoami and /healthz over HTTP, on this base.
            serverURL = try ServerURL(url).webSocketBase
            do {
                device = try EvalDevice.resolve(given: deviceID, serverURL: serverURL, token: token, caFilePath: caFile)
            } catch {
                throw CommandFailure("\(error)")
            }
        } else {
            var config = try server.makeConfig()
            if config.port == 8080 { config.port = 0 }
            // A running `serve` may own the embedded cluster: eval then uses its database as a client.
            config.embeddedClusterInUse = .attach
            let started = SpeakerSyncApplication(config: config, logger: logger)
            let port = try started.start()
            app = started
            serverURL = "\(server.isTLS ? "wss" : "ws")://127.0.0.1:\(port)"
            if config.access.mode == .required { token = try started.createDeviceToken(deviceID: device, label: "speakersync eval") }
        }
        defer { app?.shutdown() }
        let client = try WebSocketClient(caFilePath: caFile, tls: serverURL.hasPrefix("wss://"), logger: logger)
        defer { client.shutdown() }
        var config = EvalConfig(serverURL: serverURL, provider: provider, speed: speed == 0 ? nil : speed,
                                concurrency: concurrency, optionsJSON: options)
        config.token = token
        config.deviceID = device
        config.startTimeoutSeconds = startTimeout
        config.caFilePath = caFile
        config.shadowProviders = shadows
        let total = recordings.reduce(0) { $0 + $1.audioSeconds }
        let progress = ProgressReporter(command: "eval", total: recordings.count, quiet: quiet)
        progress.note("\(recordings.count) recordings, \(String(format: "%.0f", total)) s of audio, provider \(provider)\(shadows.isEmpty ? "" : " (shadows: " + shadows.joined(separator: ", ") + ")"), speed \(speed == 0 ? "max" : String(speed)), \(concurrency) at once")
        let summary: EvalSummary
        do {
            summary = try await EvalRunner(config: config, client: client, logger: logger).run(recordings) { file in
                progress.finished(file.id, detail: String(format: "%.1f s audio", file.audioSeconds),
                                  result: String(format: "DER %.1f %% (collar 0.25), WDER %.1f %%", file.finalDERCollar.errorRate * 100, file.wder.errorRate * 100))
            }
        } catch {
            throw CommandFailure("\(error)")
        }
        print(json ? EvalReportFormatter.json(summary) : EvalReportFormatter.table(summary))
    }
}
