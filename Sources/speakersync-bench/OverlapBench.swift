import ArgumentParser
import DiarizationModels
import DiarizationScoring
import Foundation
import Logging
import OverlapDiarization
import SherpaOnnxSpeakers
import SpeakerSegmentation
import SpeakerSyncAudio
import SpeakerSyncEval
import StreamingDiarization
import Synchronization
import VoiceActivity

/// The `pyannote` provider's pipeline (`OverlapDiarizer`: segmentation-3.0, CAM++, incremental
/// clustering, re-clustering at finalize) in this process on one thread, without a server: DER live
/// and final, speakers found, and CPU per audio second split into segmentation, embedding and the
/// rest. For calibration sweeps and the one-core cost; `speakersync eval` remains the end-to-end
/// measurement.
struct OverlapBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "overlap", abstract: "The pyannote provider's pipeline in-process on one thread: DER live and final, speaker count, CPU per audio second.")

    @Option(help: "A folder of 16 kHz WAV files (or one WAV file).") var audio: String
    @Option(help: "Reference RTTM for the files.") var rttm: String
    @Option(help: "UEM for the files (default: scored from the first to the last turn).") var uem: String?
    @Option(help: "The segmentation model (default: vendor/models).") var segmentationModel: String?
    @Option(help: "The embedding model (default: vendor/models CAM++).") var embeddingModel: String?
    @Option(help: "Samples per push (1600 = 100 ms, a device frame).") var chunk = 1600
    @Option(name: .customLong("step")) var stepSeconds: Double?
    @Option(name: .customLong("window")) var windowSeconds: Double?
    @Option(name: .customLong("new-distance")) var newSpeakerDistance: Float?
    @Option(name: .customLong("final-distance")) var finalDistance: Float?
    @Option(name: .customLong("min-cluster-seconds")) var minimumClusterSeconds: Double?
    @Option(name: .customLong("min-embedding-seconds")) var minimumEmbeddingSeconds: Double?
    @Option(name: .customLong("num-speakers")) var numSpeakers: Int?
    @Option(name: .customLong("active")) var activeProbability: Float?
    @Option(name: .customLong("reembed-seconds")) var reembedSeconds: Double?
    @Option(name: .customLong("max-embedding-seconds")) var maximumEmbeddingSeconds: Double?
    @Option(name: .customLong("final-distances"), help: "Also score the final re-clustering at each of these distances (comma-separated), from the same streamed windows.")
    var finalDistances: String?
    @Flag(help: "Print every file's figures.") var verbose = false
    @Flag(name: .customLong("print-turns"), help: "Print every file's live and final turns.") var printTurns = false

    func run() throws {
        var config = OverlapDiarizerConfig.campPlus
        if let stepSeconds { config.stepSeconds = stepSeconds }
        if let windowSeconds { config.windowSeconds = windowSeconds }
        if let newSpeakerDistance { config.newSpeakerDistance = newSpeakerDistance }
        if let finalDistance { config.finalDistance = finalDistance }
        if let minimumClusterSeconds { config.minimumClusterSeconds = minimumClusterSeconds }
        if let minimumEmbeddingSeconds { config.minimumEmbeddingSeconds = minimumEmbeddingSeconds }
        if let activeProbability { config.activeProbability = activeProbability }
        if let reembedSeconds { config.reembedSeconds = reembedSeconds }
        if let maximumEmbeddingSeconds { config.maximumEmbeddingSeconds = maximumEmbeddingSeconds }
        var logger = Logger(label: "overlap-bench")
        logger.logLevel = .warning
        let segmenter = TimedSegmenter(try PyannoteSegmentation(modelPath: segmentationModel ?? VendorLocation.modelPath(PyannoteSegmentation.modelFileName)))
        let extractor = try SpeakerEmbeddingExtractor(modelPath: embeddingModel ?? VendoredCampPlus.path)
        let reference = try RTTM.parse(String(contentsOfFile: rttm, encoding: .utf8))
        let scored = try uem.map { try UEM.parse(String(contentsOfFile: $0, encoding: .utf8)) }
        let files = try EvalCorpus.expandAudioPaths([audio]).map(\.path)

        var final = DERComponents.zero, finalC0 = DERComponents.zero, live = DERComponents.zero
        var audioSeconds = 0.0, allCPU = 0.0, embedCPU = 0.0
        var exactCounts = 0
        let sweep = (finalDistances ?? "").split(separator: ",").compactMap { Float($0.trimmingCharacters(in: .whitespaces)) }
        var sweepDER = [DERComponents](repeating: .zero, count: sweep.count)
        var sweepExact = [Int](repeating: 0, count: sweep.count)
        let embedder = TimedEmbedder(SherpaOnnxEmbedder(extractor: extractor))
        for file in files {
            let id = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
            let buffer = try WAVFile.read(contentsOf: URL(fileURLWithPath: file))
            guard buffer.sampleRate == 16_000 else { throw ValidationError("\(file): \(buffer.sampleRate) Hz; this benchmark takes 16 kHz audio") }
            let diarizer = OverlapDiarizer(config: config, hint: SpeakerCountHint(exact: numSpeakers), segmenter: segmenter, embedder: embedder, logger: logger)
            var turns: [UInt64: DiarizerTurn] = [:]
            func collect() {
                for turn in diarizer.pullTurns() { turns[turn.id] = turn.isRemoved ? nil : turn }
            }
            let embedBefore = embedder.cpuSeconds.withLock { $0 }
            let started = threadCPUSeconds()
            for start in stride(from: 0, to: buffer.samples.count, by: chunk) {
                try diarizer.push(Array(buffer.samples[start ..< min(buffer.samples.count, start + chunk)]))
                collect()
            }
            let liveTurns = turns.values.map(\.segment)
            try diarizer.finalize()
            collect()
            let cpu = threadCPUSeconds() - started
            let seconds = Double(buffer.samples.count) / 16_000
            audioSeconds += seconds
            allCPU += cpu
            embedCPU += embedder.cpuSeconds.withLock { $0 } - embedBefore
            let hypothesis = turns.values.map(\.segment)
            if printTurns {
                for turn in liveTurns.sorted(by: { $0.startSeconds < $1.startSeconds }) { print("live \(turn.speaker) \(f(turn.startSeconds, 2))-\(f(turn.endSeconds, 2))") }
                for turn in hypothesis.sorted(by: { $0.startSeconds < $1.startSeconds }) { print("final \(turn.speaker) \(f(turn.startSeconds, 2))-\(f(turn.endSeconds, 2))") }
            }
            let truth = reference[id] ?? []
            let spans = scored?[id]
            let der = DiarizationErrorRate.score(reference: truth, hypothesis: hypothesis, uem: spans, config: DERConfig(collarSeconds: 0.25))
            final = final + der
            finalC0 = finalC0 + DiarizationErrorRate.score(reference: truth, hypothesis: hypothesis, uem: spans, config: DERConfig(collarSeconds: 0))
            let liveDER = DiarizationErrorRate.score(reference: truth, hypothesis: liveTurns, uem: spans, config: DERConfig(collarSeconds: 0.25))
            live = live + liveDER
            let found = Set(hypothesis.map(\.speaker)).count, expected = Set(truth.map(\.speaker)).count
            if found == expected { exactCounts += 1 }
            for (index, distance) in sweep.enumerated() {
                var other = config
                other.finalDistance = distance
                let turns = diarizer.reclustered(with: other).map(\.segment)
                sweepDER[index] = sweepDER[index] + DiarizationErrorRate.score(reference: truth, hypothesis: turns, uem: spans, config: DERConfig(collarSeconds: 0.25))
                if Set(turns.map(\.speaker)).count == expected { sweepExact[index] += 1 }
            }
            if verbose {
                print("\(id): DER c0.25 \(percent(der.errorRate)) (miss \(f(der.missedSeconds, 1)) s, FA \(f(der.falseAlarmSeconds, 1)) s, "
                    + "conf \(f(der.confusionSeconds, 1)) s), live \(percent(liveDER.errorRate)), speakers \(found)/\(expected), RTF \(f(cpu / seconds, 4))")
            }
        }
        print("files \(files.count), audio \(f(audioSeconds, 1)) s; step \(config.stepSeconds) s, window \(config.windowSeconds) s, "
            + "new \(config.newSpeakerDistance), final \(config.finalDistance), min cluster \(config.minimumClusterSeconds) s")
        print("DER c0.25 \(percent(final.errorRate)) (miss \(percent(final.missedSeconds / final.referenceSeconds)), "
            + "FA \(percent(final.falseAlarmSeconds / final.referenceSeconds)), conf \(percent(final.confusionSeconds / final.referenceSeconds))); "
            + "DER c0 \(percent(finalC0.errorRate)); live (before finalize) c0.25 \(percent(live.errorRate)); speaker count exact \(exactCounts)/\(files.count)")
        for (index, distance) in sweep.enumerated() {
            print("final distance \(distance): DER c0.25 \(percent(sweepDER[index].errorRate)), speaker count exact \(sweepExact[index])/\(files.count)")
        }
        print("CPU per audio second (one thread): total \(f(allCPU / audioSeconds, 4)), segmentation \(f(segmenter.cpuSeconds / audioSeconds, 4)), "
            + "embedding \(f(embedCPU / audioSeconds, 4)), rest \(f((allCPU - segmenter.cpuSeconds - embedCPU) / audioSeconds, 4))")
    }

    private func percent(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }
    private func f(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }
}

/// Counts the CPU the segmentation model spends (one thread: the bench's).
/// `@unchecked Sendable`: the bench drives it from one thread only.
private final class TimedSegmenter: WindowSegmenter, @unchecked Sendable {
    let inner: PyannoteSegmentation
    var cpuSeconds = 0.0
    var frames: SegmentationFrames { inner.frames }

    init(_ inner: PyannoteSegmentation) { self.inner = inner }

    func activity(_ samples: UnsafeBufferPointer<Float>) throws -> LocalSpeakerActivity {
        let started = threadCPUSeconds()
        defer { cpuSeconds += threadCPUSeconds() - started }
        return try inner.activity(samples)
    }
}
