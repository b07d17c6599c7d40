import ArgumentParser
import Foundation
import SpeakerSyncAudio
import SpeakerSyncClient
import WebSocketTransport

struct StreamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stream",
        abstract: "Stream a recording and its ASR words to a server exactly as a device would; print the labelled transcript."
    )

    @Argument(help: "The recording (WAV, any rate; sent as 16-bit PCM at its own rate).")
    var file: String

    @Option(help: "Words file: {\"words\":[{\"text\",\"start\",\"end\",\"confidence\"?}]}.")
    var words: String

    @Option(help: "Device segments file {\"segments\":[{\"speaker\",\"start\",\"end\"}]} (provider device).")
    var segments: String?

    @Option(help: "RTTM whose turns are sent as device segments (provider device).")
    var rttm: String?

    @Option(help: "Diarization provider (default: device with --segments/--rttm, else energy).")
    var provider: String?

    @Option(help: "WebSocket URL of the server (wss:// for a TLS server).")
    var url: String = "ws://127.0.0.1:8080/v1/listen"

    @OptionGroup var tls: CAFileOption

    @Option(help: "Multiple of real time to stream at (default: as fast as the server accepts).")
    var speed: Double?

    @Option(help: "text or json.")
    var format: OutputFormat = .text

    @Option(name: .customLong("conversation-id"), help: "Continue (or create) this conversation.")
    var conversationID: String?

    @OptionGroup var credential: ClientCredentialOptions

    @Option(name: .customLong("start-timeout"), help: "Seconds to keep trying to reach the server before the first session starts.")
    var startTimeout: Double = 30

    @Option(name: .customLong("device-id"), help: "Default: the device token's device (omitted from the start), else speakersync-cli.")
    var deviceID: String?

    @Option(help: "Provider options as a JSON object, e.g. '{\"max_speakers\":2}'.")
    var options: String?

    @Flag(help: "Send each ASR result first as volatile, then final, as SpeechAnalyzer does.")
    var volatile = false

    enum OutputFormat: String, ExpressibleByArgument { case text, json }

    func run() async throws {
        let audio = try WAVFile.read(contentsOf: URL(fileURLWithPath: file))
        let deviceWords = try DeviceInput.readWords(path: words)
        var deviceSegments: [DeviceSegment] = []
        if let segments { deviceSegments = try DeviceInput.readSegments(path: segments) }
        if let rttm { deviceSegments += try DeviceInput.readRTTM(path: rttm) }
        var config = DeviceStreamConfig(url: url, provider: provider ?? (deviceSegments.isEmpty ? "speakerkit" : "device"), deviceID: deviceID ?? (credential.token?.hasPrefix("sst_") == true ? "" : "speakersync-cli"))
        config.token = credential.token
        // Survive a server restart or a network drop: resume the conversation and resend what the
        // server may not have stored (SpeakerSyncKit).
        config.reconnect = .default
        config.startTimeoutSeconds = startTimeout
        config.onState = { state in
            switch state {
            case .resuming(let attempt): FileHandle.standardError.write(Data("connection lost; resuming (attempt \(attempt))\n".utf8))
            case .offline(let retry, let attempt, let reason):
                FileHandle.standardError.write(Data("server unreachable (\(reason)); retrying in \(String(format: "%.1f", retry)) s (attempt \(attempt))\n".utf8))
            default: break
            }
        }
        config.speed = speed
        config.conversationID = conversationID
        config.optionsJSON = options
        config.volatileResults = volatile
        config.caFilePath = tls.caFile
        let logger = makeLogger(level: "warning", label: "speakersync.stream")
        let client = try DeviceStreamer.makeClient(for: config, logger: logger)
        defer { client.shutdown() }
        let report = try await DeviceStreamer(client: client, config: config, logger: logger)
            .stream(audio: audio.samples, sampleRate: audio.sampleRate, words: deviceWords, segments: deviceSegments)
        for error in report.errors {
            FileHandle.standardError.write(Data("server error \(error.code): \(error.message)\n".utf8))
        }
        switch format {
        case .text:
            print(report.transcript.text)
        case .json:
            let data = try JSONSerialization.data(withJSONObject: report.transcript.jsonObject(conversationID: report.conversationID), options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        }
        if report.closeCode != 1000 {
            throw CommandFailure("the session ended with close code \(report.closeCode.map(String.init) ?? "none") instead of 1000")
        }
    }
}
