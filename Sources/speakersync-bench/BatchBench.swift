import ArgumentParser
import DiarizationModels
import Foundation
import Logging
import SpeakerManager
import SpeakerEmbedding
import SpeakerSyncAudio
import SpeakerSyncEval
import StreamingDiarization
import Synchronization
import VoiceActivity

/// Many speakerkit sessions on one thread, interleaved chunk by chunk as a worker serves them: each
/// session's push on its own, or every session's push of a tick together as speakerkit's push_audio_many
/// does it (one silero call per step for all sessions, `SileroBatch`; with `--encoder-batch` also one
/// encoder call, `DiarizerBatch`). CPU per audio second, split into VAD and embedding, and whether every
/// session's turns came out the same both ways.
struct BatchBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch", abstract: "N speakerkit sessions interleaved on one thread: alone per push, then batched per tick; CPU per audio second and equal turns.")

    @Option(help: "A folder of 16 kHz WAV files (or one WAV file); sessions take them in turn.") var audio: String
    @Option(help: "Comma-separated session counts.") var sessions = "1,10,50"
    @Option(help: "Samples per push (1600 = 100 ms, a device frame).") var chunk = 1600
    @Option(help: "Seconds of each file a session streams (0: the whole file).") var seconds = 0.0
    @Option(name: .customLong("encoder-batches"), help: "Also time the encoder alone on 1.5 s windows in batches of these sizes (comma-separated).")
    var encoderBatches: String?
    @Flag(name: .customLong("encoder-batch"), help: "Batched mode also embeds every session's windows in one encoder call (DiarizerBatch).")
    var encoderBatch = false

    func run() throws {
        var logger = Logger(label: "batch-bench")
        logger.logLevel = .warning
        let encoder = try SpeakerEncoder(logger: logger)
        let recordings = try EvalCorpus.expandAudioPaths([audio]).map { file -> [Float] in
            let buffer = try WAVFile.read(contentsOf: URL(fileURLWithPath: file.path))
            guard buffer.sampleRate == 16_000 else { throw ValidationError("\(file.path): \(buffer.sampleRate) Hz; this benchmark takes 16 kHz") }
            return seconds > 0 ? Array(buffer.samples.prefix(Int(seconds * 16_000))) : buffer.samples
        }
        guard !recordings.isEmpty else { throw ValidationError("no WAV files in \(audio)") }
        if let encoderBatches {
            // Windows cut from the recordings every 0.5 s, as frames are; the same windows at every size.
            let windows = recordings.flatMap { samples in
                stride(from: 0, to: samples.count - 24_000, by: 8_000).map { Array(samples[$0 ..< $0 + 24_000]) }
            }.prefix(960)
            print("encoder alone: \(windows.count) windows of 1.5 s")
            print("batch  CPU ms per window")
            for size in encoderBatches.split(separator: ",").compactMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) where size > 0 {
                _ = try encoder.embed(sampleWindows: Array(windows.prefix(size)), sampleRate: 16_000)   // warm
                let started = threadCPUSeconds()
                for start in stride(from: 0, to: windows.count, by: size) {
                    _ = try encoder.embed(sampleWindows: Array(windows[windows.startIndex + start ..< windows.startIndex + min(windows.count, start + size)]),
                                          sampleRate: 16_000)
                }
                print(String(format: "%5d  %.3f", size, (threadCPUSeconds() - started) * 1000 / Double(windows.count)))
            }
        }
        print("sessions  mode     CPU s per audio s  VAD     embedding  encoder calls  windows per call  turns equal")
        for count in sessions.split(separator: ",").compactMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
            let audios = (0 ..< count).map { recordings[$0 % recordings.count] }
            let alone = try pass(audios, batched: false, encoder: encoder, logger: logger)
            let batched = try pass(audios, batched: true, encoder: encoder, logger: logger)
            // Labels, not confidences: a confidence is a distance, and batching may round it differently.
            func labels(_ turns: [DiarizerTurn]) -> [String] {
                turns.map { String(format: "%d %.3f %.3f", $0.speaker, $0.startSeconds, $0.endSeconds) }
            }
            let equal = zip(alone.turns, batched.turns).filter { labels($0) == labels($1) }.count
            for (name, result) in [("alone", alone), ("batched", batched)] {
                print(String(format: "%8d  %-7@  %17.4f  %.4f  %9.4f  %13d  %16.1f  %@", count, name, result.cpuSeconds / result.audioSeconds,
                             result.vadSeconds / result.audioSeconds, result.embeddingSeconds / result.audioSeconds, result.calls,
                             Double(result.windows) / Double(max(1, result.calls)), name == "alone" ? "" : "\(equal) of \(count)"))
            }
        }
    }

    struct PassResult {
        var cpuSeconds = 0.0, vadSeconds = 0.0, embeddingSeconds = 0.0, audioSeconds = 0.0
        var calls = 0, windows = 0
        var turns: [[DiarizerTurn]] = []
    }

    func pass(_ audios: [[Float]], batched: Bool, encoder: SpeakerEncoder, logger: Logger) throws -> PassResult {
        let embedder = CountingEmbedder(TimedEmbedder(GE2EEmbedder(encoder: encoder)))
        var detectors: [TimedDetector] = []
        var silero: [SileroVoiceActivityDetector] = []
        var diarizers: [StreamingDiarizer] = []
        var prefetchSeconds = 0.0
        for _ in audios {
            silero.append(try SileroVoiceActivityDetector(config: .default, logger: logger))
            let detector = TimedDetector(SileroSpeechDetector(detector: silero[silero.count - 1]))
            detectors.append(detector)
            diarizers.append(StreamingDiarizer(config: .default, detector: detector, embedder: embedder,
                                               speakers: try SpeakerManager(config: DiarizerConfig.default.speakerManagerConfig, logger: logger), logger: logger))
        }
        var turns = [[UInt64: DiarizerTurn]](repeating: [:], count: audios.count)
        func collect(_ index: Int) {
            for turn in diarizers[index].pullTurns() {
                if turn.isRemoved { turns[index][turn.id] = nil } else { turns[index][turn.id] = turn }
            }
        }
        let started = threadCPUSeconds()
        let longest = audios.map(\.count).max() ?? 0
        for start in stride(from: 0, to: longest, by: chunk) {
            let due = audios.indices.filter { start < audios[$0].count }
            let pieces = due.map { Array(audios[$0][start ..< min(audios[$0].count, start + chunk)]) }
            if batched {
                let prefetchStarted = threadCPUSeconds()
                let buffers = pieces.map { piece in
                    let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: piece.count)
                    _ = buffer.initialize(from: piece)
                    return buffer
                }
                SileroBatch.prefetch(zip(due, buffers).map { (silero[$0], UnsafeBufferPointer($1)) })
                buffers.forEach { $0.deallocate() }
                prefetchSeconds += threadCPUSeconds() - prefetchStarted
                if encoderBatch {
                    let errors = DiarizerBatch.push(zip(due, pieces).map { (diarizers[$0], $1) }, embedder: embedder)
                    if let failure = errors.compactMap({ $0 }).first { throw failure }
                } else {
                    for (index, piece) in zip(due, pieces) { try diarizers[index].push(piece) }
                }
            } else {
                for (index, piece) in zip(due, pieces) { try diarizers[index].push(piece) }
            }
            for index in due { collect(index) }
        }
        for index in diarizers.indices {
            try diarizers[index].finalize()
            collect(index)
        }
        var result = PassResult()
        result.cpuSeconds = threadCPUSeconds() - started
        result.vadSeconds = detectors.map(\.cpuSeconds).reduce(0, +) + prefetchSeconds
        result.embeddingSeconds = embedder.inner.cpuSeconds.withLock { $0 }
        result.audioSeconds = Double(audios.map(\.count).reduce(0, +)) / 16_000
        result.calls = embedder.calls
        result.windows = embedder.windows
        result.turns = turns.map { $0.values.sorted { $0.id < $1.id } }
        return result
    }
}

/// Counts encoder calls and the windows they carried.
final class CountingEmbedder: SpeakerEmbedder {
    let inner: TimedEmbedder
    private let counts = Mutex((calls: 0, windows: 0))

    init(_ inner: TimedEmbedder) { self.inner = inner }

    var calls: Int { counts.withLock { $0.calls } }
    var windows: Int { counts.withLock { $0.windows } }
    var dimension: Int { inner.dimension }
    func embed(_ windows: [[Float]]) throws -> [[Float]] {
        counts.withLock { $0 = ($0.calls + 1, $0.windows + windows.count) }
        return try inner.embed(windows)
    }
}
