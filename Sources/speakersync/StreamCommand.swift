import ArgumentParser
import Foundation
import OpusCodec
import SpeakerSyncAudio
import SpeakerSyncClient
import WebSocketTransport

struct StreamCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stream",
        abstract: "Stream a recording and its ASR words to a server exactly as a device would; print the labelled transcript."
    )

    @Argument(help: "The recording: WAV (any rate; sent as 16-bit PCM at its own rate, or see --encoding), or Ogg Opus (.opus/.ogg; its packets are sent as they are, encoding opus at 48000 Hz).")
    var file: String

    @Option(help: "How to send a WAV: pcm_s16le, or opus (encoded here: 20 ms packets, 24 kbps; the WAV must be 8, 12, 16, 24 or 48 kHz).")
    var encoding: DeviceAudioEncoding = .pcmS16LE

    @Option(help: "Words file: {\"words\":[{\"text\",\"start\",\"end\",\"confidence\"?}]}. Required unless --asr server.")
    var words: String?

    @Option(help: "Who recognises the words: device (the --words file is sent) or server (the server recognises the audio with PocketSphinx; no --words).")
    var asr: ASRChoice = .device

    @Option(help: "Device segments file {\"segments\":[{\"speaker\",\"start\",\"end\"}]} (provider device).")
    var segments: String?

    @Option(help: "RTTM whose turns are sent as device segments (provider device).")
    var rttm: String?

    // The start always names a provider (SpeakerSyncKit sends one), so the help says which rather than
    // "the server's default": a device's provider setting in the console does not apply to `stream`.
    @Option(help: "Diarization provider (default: device with --segments/--rttm, else speakerkit, also the server's own default unless it was configured otherwise).")
    var provider: String?

    @OptionGroup var url: ServerURLOption

    @OptionGroup var tls: CAFileOption

    @Option(help: "Multiple of real time to stream at (default: as fast as the server accepts).")
    var speed: Double?

    @Option(help: "text or json.")
    var format: OutputFormat = .text

    @Option(name: .customLong("conversation-id"), help: "Continue (or create) this conversation.")
    var conversationID: String?

    @OptionGroup var credential: ClientCredentialOptions

    @Option(name: .customLong("start-timeout"), help: "Seconds the first session may take to start, whatever the retries are doing; then stream exits non-zero with the reason.")
    var startTimeout: Double = 30

    @Option(name: .customLong("device-id"), help: "Default: the device token's device (omitted from the start), else speakersync-cli.")
    var deviceID: String?

    @Option(help: "Provider options as a JSON object, e.g. '{\"max_speakers\":2}'.")
    var options: String?

    @Flag(help: "Send each ASR result first as volatile, then final, as SpeechAnalyzer does.")
    var volatile = false

    @Option(name: .customLong("shadow"), help: "A provider the server runs beside --provider on the same audio (repeatable, at most 2); its labels are stored for `speakersync compare`, not printed.")
    var shadows: [String] = []

    @Flag(name: .customLong("store-audio"), help: "Ask the server to keep the audio (lossless) for playback and re-diarization.")
    var storeAudio = false

    @Flag(help: "Show the transcript as the server revises it, on standard error: redrawn in place on a terminal, else one line per changed utterance (u3 1.2-2.0 s Speaker 1: …).")
    var live = false

    enum OutputFormat: String, ExpressibleByArgument { case text, json }
    enum ASRChoice: String, ExpressibleByArgument { case device, server }

    func validate() throws {
        guard startTimeout > 0 else { throw ValidationError("--start-timeout must be positive") }
        switch (asr, words) {
        case (.device, nil): throw ValidationError("--words is required (or let the server recognise the words: --asr server)")
        case (.server, _?): throw ValidationError("--asr server makes the server recognise the words; give no --words")
        default: break
        }
    }

    func run() async throws {
        var deviceWords = try words.map { try DeviceInput.readWords(path: $0) } ?? []
        if let words, deviceWords.isEmpty {
            // Not an error (a silent recording has no words), but rarely what was meant: said, not stored silently.
            FileHandle.standardError.write(Data("warning: words file \(words) holds no words; the conversation is stored without a transcript\n".utf8))
        }
        var deviceSegments: [DeviceSegment] = []
        if let segments { deviceSegments = try DeviceInput.readSegments(path: segments) }
        if let rttm { deviceSegments += try DeviceInput.readRTTM(path: rttm) }
        let audio: AudioMessages
        let lowercased = file.lowercased()
        if lowercased.hasSuffix(".opus") || lowercased.hasSuffix(".ogg") {
            let ogg = try OggOpusFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
            audio = try AudioMessages.opus(packets: ogg.packets, sampleRate: OggOpusFile.timelineRate)
            // The packets are sent untouched, so the server decodes the encoder's priming too: its
            // timeline runs pre-skip later than the file's. The words and segments (timed on the
            // original audio) are moved by as much, to lie on the audio the server hears.
            let shift = Double(ogg.preSkip) / Double(OggOpusFile.timelineRate)
            for index in deviceWords.indices {
                deviceWords[index].startSeconds += shift
                deviceWords[index].endSeconds += shift
            }
            for index in deviceSegments.indices {
                deviceSegments[index].startSeconds += shift
                deviceSegments[index].endSeconds += shift
            }
        } else {
            let wav = try WAVFile.read(contentsOf: URL(fileURLWithPath: file))
            switch encoding {
            case .pcmS16LE:
                audio = AudioMessages.pcm(wav.samples, sampleRate: wav.sampleRate, chunkSamples: Int(0.1 * Double(wav.sampleRate)))
            case .opus:
                guard [8_000, 12_000, 16_000, 24_000, 48_000].contains(wav.sampleRate) else {
                    throw CommandFailure("--encoding opus needs a WAV at 8, 12, 16, 24 or 48 kHz, not \(wav.sampleRate) Hz")
                }
                audio = try AudioMessages.opus(wav.samples, sampleRate: wav.sampleRate, bitsPerSecond: 24_000)
            }
        }
        var config = DeviceStreamConfig(url: try url.server.webSocketURL, provider: provider ?? (deviceSegments.isEmpty ? "speakerkit" : "device"), deviceID: deviceID ?? (credential.token?.hasPrefix("sst_") == true ? "" : "speakersync-cli"))
        config.token = credential.token
        config.shadowProviders = shadows
        config.storeAudio = storeAudio
        // Survive a server restart or a network drop: resume the conversation and resend what the
        // server may not have stored (SpeakerSyncKit).
        config.reconnect = .default
        config.startTimeoutSeconds = startTimeout
        // Chosen here rather than by the streamer, so it can be shown before the first byte is sent.
        let conversation = conversationID ?? UUID().uuidString.lowercased()
        let view = live ? LiveTranscriptView() : nil
        let note: @Sendable (String) -> Void = { line in
            if let view { view.note(line) } else { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        }
        if format == .text { note("conversation \(conversation)") }
        config.onState = { state in
            switch state {
            case .resuming(let attempt): note("connection lost; resuming (attempt \(attempt))")
            case .offline(let retry, let attempt, let reason):
                note("server unreachable (\(reason)); retrying in \(String(format: "%.1f", retry)) s (attempt \(attempt))")
            default: break
            }
        }
        // Server-side recognition runs at the server's pace after the audio went out: say how far it got.
        let progress = asr == .server && view == nil && format == .text
            ? RecognitionProgress(audioSeconds: Double(audio.sampleCount) / Double(audio.sampleRate), write: note) : nil
        if view != nil || progress != nil {
            config.onMessage = { message in
                view?.received(message)
                progress?.received(message)
            }
        }
        progress?.start()
        defer { progress?.stop() }
        config.speed = speed
        config.conversationID = conversation
        config.optionsJSON = options
        config.asr = asr == .server ? "server" : nil
        config.volatileResults = volatile
        config.caFilePath = tls.caFile
        let logger = makeLogger(level: .warning, label: "speakersync.stream")
        let client = try DeviceStreamer.makeClient(for: config, logger: logger)
        defer { client.shutdown() }
        let report: StreamReport
        do {
            report = try await DeviceStreamer(client: client, config: config, logger: logger)
                .stream(audio, words: deviceWords, segments: deviceSegments)
        } catch {
            view?.finish(clear: false)
            throw error
        }
        // On a terminal the final transcript replaces the live one, unless it goes elsewhere.
        view?.finish(clear: isatty(STDOUT_FILENO) == 1)
        for error in report.errors {
            FileHandle.standardError.write(Data("server error \(error.code): \(error.message)\n".utf8))
        }
        switch format {
        case .text:
            print(report.transcript.text)
        case .json:
            print(try JSONText.render(report.transcript.jsonObject(conversationID: report.conversationID)))
        }
        if report.closeCode != 1000 {
            throw CommandFailure("the session ended with close code \(report.closeCode.map(String.init) ?? "none") instead of 1000")
        }
    }
}

extension DeviceAudioEncoding: ExpressibleByArgument {}
