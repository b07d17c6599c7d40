import ArgumentParser
import Foundation
import MeetingSynth
import SpeakerSyncClient
import SpeakerSyncServer
import WebSocketTransport

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start the server on the embedded PostgreSQL, stream a synthetic meeting with true word times through the WebSocket like a device, print the labelled transcript."
    )

    @OptionGroup var server: ServerOptions

    @Option(help: "Diarization provider for the demo session.")
    var provider: String = "speakerkit"

    @Option(help: "Number of speakers in the synthetic meeting (2 to 6).")
    var speakers: Int = 2

    @Option(help: "Number of turns in the synthetic meeting.")
    var turns: Int = 8

    @Option(help: "Seed of the synthetic meeting (same seed, same meeting).")
    var seed: UInt64 = 7

    @Option(help: "Stream at this multiple of real time (default: as fast as the server accepts).")
    var speed: Double?

    @Flag(name: .customLong("keep-running"), help: "Keep serving after the demo so you can query it; stop with Ctrl-C.")
    var keepRunning = false

    func run() async throws {
        var config = try server.makeConfig()
        if config.port == 8080 && !keepRunning { config.port = 0 }
        // A running `serve` may own the embedded cluster: the demo then uses its database as a client.
        config.embeddedClusterInUse = .attach
        let logger = makeLogger(level: server.logLevel == .info ? .warning : server.logLevel)
        let app = SpeakerSyncApplication(config: config, logger: logger)
        let port = try app.start()
        defer { if !keepRunning { app.shutdown() } }
        var database = "DATABASE_URL"
        var ownsDatabase = false
        switch app.embeddedClusterRole {
        case .owner?: (database, ownsDatabase) = ("embedded PostgreSQL in \(config.dataDirectory)", true)
        case .client(let owner)?: database = "embedded PostgreSQL in \(config.dataDirectory), owned by \(owner.map { "pid \($0)" } ?? "another process")"
        case nil: break
        }
        print("SpeakerSync \(SpeakerSyncApplication.version) on \(server.localListenURL(port: port)) (\(database))")

        let script = try MeetingScript.generate(seed: seed, speakerCount: speakers, turnCount: turns)
        let meeting = try MeetingSynthesizer().synthesize(script, seed: seed)
        print("Synthesised a \(String(format: "%.1f", meeting.durationSeconds)) s meeting: \(speakers) voices (espeak-ng and Festival), \(meeting.words.count) words with exact times (seed \(seed)).")

        var streamConfig = DeviceStreamConfig(url: server.localListenURL(port: port), provider: provider, deviceID: "demo-device")
        // With --tls-cert the demo's server is TLS; its (usually self-signed) certificate is the CA to trust.
        streamConfig.caFilePath = server.tlsCertificate
        // The demo is its own admin: it makes the device token a phone would be given.
        let token = config.access.mode == .required ? try app.createDeviceToken(deviceID: "demo-device", label: "speakersync demo") : nil
        streamConfig.token = token
        streamConfig.reconnect = .default
        streamConfig.speed = speed
        streamConfig.volatileResults = true
        let words = meeting.words.map { DeviceWord(text: $0.text, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds, confidence: 0.9) }
        let segments = provider == "device"
            ? meeting.turns.map { DeviceSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) } : []
        let client = try DeviceStreamer.makeClient(for: streamConfig, logger: logger)
        defer { client.shutdown() }
        let started = ContinuousClock.now
        let report = try await DeviceStreamer(client: client, config: streamConfig, logger: logger)
            .stream(audio: meeting.audio, sampleRate: meeting.sampleRate, words: words, segments: segments)
        let elapsed = ContinuousClock.now - started
        for error in report.errors { print("server error \(error.code): \(error.message)") }

        print("\nLabelled transcript (provider \(provider), conversation \(report.conversationID)):\n")
        print(report.transcript.text)

        let labelled = report.transcript.words
        let agreement = WordSpeakerAgreement(truth: meeting.words.map { ($0.text, $0.startSeconds, $0.speaker) },
                                             labelled: labelled.map { ($0.text, $0.startSeconds, $0.speaker) })
        let http = server.isTLS ? "https" : "http"
        let caHint = server.tlsCertificate.map { (curl: "--cacert '\($0)' ", cli: " --ca-file '\($0)'") } ?? (curl: "", cli: "")
        print("""

        \(labelled.count) of \(meeting.words.count) words came back; \(agreement.unlabelledCount) without a speaker; \
        \(agreement.correctCount) (\(String(format: "%.1f", agreement.accuracy * 100)) %) carry the true speaker \
        (one-to-one label mapping). Streamed in \(String(format: "%.2f", elapsed.seconds)) s.

        Query it (with the demo device's token; it reads only demo-device's conversations):
          export SPEAKERSYNC_TOKEN=\(token ?? "")
          curl -H "Authorization: Bearer $SPEAKERSYNC_TOKEN" \(caHint.curl)'\(http)://127.0.0.1:\(port)/v1/conversations/\(report.conversationID)/transcript?format=text'
          .build/release/speakersync transcript \(report.conversationID) --url \(http)://127.0.0.1:\(port)\(caHint.cli)
          psql \"\(app.databaseConnectionString ?? "$DATABASE_URL")\" -c "SELECT line FROM transcript_lines WHERE conversation_id = '\(report.conversationID)' ORDER BY start_seconds"
        """)
        if keepRunning {
            print("\nServing on port \(port); Ctrl-C stops the server\(ownsDatabase ? " and its PostgreSQL" : "").")
            await waitForTermination()
            app.shutdown()
        } else {
            print("(The server stops with the demo; run `speakersync demo --keep-running`, or `speakersync serve` for the same embedded database on port 8080, to query it.)")
        }
    }
}
