import ArgumentParser
import DiarizationModels
import DiarizationScoring
import Foundation
import Logging
import SpeakerEmbedding
import SpeakerManager
import SpeakerSegmentation
import SpeakerSyncAudio
import SpeakerSyncEval
import SpeakerSyncServer
import SherpaOnnxSpeakers
import StreamingDiarization
import Synchronization
import TranscriptMerge
import VoiceActivity

/// speakerkit's pipeline (silero VAD → GE2E → SpeakerManager → offline re-clustering) run in this
/// process on one thread, without a server: DER per file and overall, speakers found, and the CPU it
/// costs per second of audio split into VAD, embedding and the rest. For tuning and for the
/// one-core speed figure; `speakersync eval` remains the end-to-end measurement.
struct DiarizeBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diarize", abstract: "speakerkit's diarizer in-process on one thread: DER, speaker count, CPU per audio second.")

    @Option(help: "A folder of 16 kHz WAV files (or one WAV file).") var audio: String
    @Option(help: "Reference RTTM for the files.") var rttm: String
    @Option(help: "UEM for the files (default: scored from the first to the last turn).") var uem: String?
    @Option(help: "Samples per push (1600 = 100 ms, a device frame).") var chunk = 1600
    @Option(help: "Push audio at this multiple of real time, sleeping between chunks as a device stream does (0: as fast as possible). CPU per audio second at pace 1 includes what idling between chunks costs (cold caches, a thread that moves between cores).")
    var pace = 0.0
    @Option(name: .customLong("embedding-model"), help: "A sherpa-onnx speaker embedding ONNX model in place of GE2E, as `speakerkit.NAME` runs it ('campplus': the CAM++ scripts/setup vendors). Its live thresholds are EmbeddingModelThresholds' (or --model-thresholds); the other options override them.")
    var embeddingModel: String?
    @Option(name: .customLong("model-thresholds"), help: "With --embedding-model: the provider config's thresholds as JSON, e.g. '{\"speaker\": 0.6}'.")
    var modelThresholds: String?
    @Option(name: .customLong("speaker-threshold")) var speakerThreshold: Float?
    @Option(name: .customLong("cluster-threshold")) var clusterThreshold: Float?
    @Option(help: "Offline pass at finalize.") var offline: OfflineClustering?
    @Option(name: .customLong("switch-penalty")) var switchPenalty: Float?
    @Option(name: .customLong("minimum-count-gain")) var minimumCountGain: Float?
    @Option(name: .customLong("minimum-count-coherence")) var minimumCountCoherence: Float?
    @Option(name: .customLong("pairwise-turns"), help: "DiarizerConfig.pairwiseTurns: off, every or nearest (finalize's turn-taking test counts turns pair by pair).") var pairwiseTurns: String?
    @Option(name: .customLong("pause-decibels"), help: "Override DiarizerConfig.default.speakerChangePauseDecibels (0: off).") var pauseDecibels: Double?
    @Option(name: .customLong("pause-seconds"), help: "Override DiarizerConfig.default.speakerChangePauseSeconds.") var pauseSeconds: Double?
    @Option(name: .customLong("frame-seconds")) var frameSeconds: Double?
    @Option(name: .customLong("window-seconds")) var windowSeconds: Double?
    @Option(name: .customLong("minimum-batch")) var minimumBatch: Int?
    @Option(name: .customLong("embedding-stride"), help: "Embed one frame in N, as load shedding does (1: every frame).")
    var embeddingStride = 1
    @Option(name: .customLong("analysis-block"), help: "Override DiarizerConfig.default.analysisBlockSeconds (0: every push).") var analysisBlock: Double?
    @Option(name: .customLong("stretch-frames"), help: "Override DiarizerConfig.default.minimumStretchFrames (0: no stretch reassignment at finalize).") var stretchFrames: Int?
    @Option(name: .customLong("uncounted-voice-margin"), help: "Override DiarizerConfig.default.uncountedVoiceMargin (0: no search for a voice the count missed).") var uncountedVoiceMargin: Float?
    @Option(name: .customLong("uncounted-voice-seconds"), help: "Override DiarizerConfig.default.uncountedVoiceSeconds.") var uncountedVoiceSeconds: Double?
    @Option(name: .customLong("live-recluster-seconds"), help: "Override DiarizerConfig.default.liveReclusterSeconds (0: no live re-clustering).") var liveReclusterSeconds: Double?
    @Option(name: .customLong("number-founding-seconds"), help: "Override DiarizerConfig.default.numberFoundingSeconds (0: re-clustering gives online speakers' numbers by shared speech alone).") var numberFoundingSeconds: Double?
    @Option(name: .customLong("live-solo-seconds"), help: "Override DiarizerConfig.default.liveSoloSpeakerSeconds (0: live passes take no count floor from the segmentation's windows).") var liveSoloSeconds: Double?
    @Option(name: .customLong("num-speakers")) var numSpeakers: Int?
    @Option(name: .customLong("vad-min-silence"), help: "Override VADConfig.default.minSilenceDurationSeconds.") var vadMinSilence: Double?
    @Option(name: .customLong("vad-threshold"), help: "Override VADConfig.default.threshold.") var vadThreshold: Float?
    @Option(name: .customLong("vad-pad"), help: "Override VADConfig.default.speechPadSeconds.") var vadPad: Double?
    @Option(name: .customLong("vad-max-speech"), help: "Override VADConfig.default.maxSpeechDurationSeconds.") var vadMaxSpeech: Double?
    @Option(name: .customLong("overlap-model"), help: "The segmentation model of speakerkit's overlap pass (default: vendor's pyannote segmentation-3.0). The final turns are scored without and with the overlapped speech it adds (OverlapTurns).")
    var overlapModel: String?
    @Flag(name: .customLong("no-overlap"), help: "Skip the overlap pass.") var noOverlap = false
    @Flag(name: .customLong("segmented-split"), help: "Also try the split seeded by the segmentation's windows (DiarizerConfig.segmentedVoiceSplit, off by default).")
    var segmentedSplit = false
    @Flag(name: .customLong("fill-missed"), help: "Also give a named local speaker the frames no turn covers (tried on the calibration sets and left out of speakerkit: docs/speakerkit.md step 8).")
    var fillMissed = false
    @Flag(name: .customLong("fill-missed-outside-pauses"), help: "With --fill-missed: never inside a pause the loudness track hears.")
    var fillMissedOutsidePauses = false

    @Option(name: .customLong("solo-relabel-share"), help: "Override DiarizerConfig.default.soloRelabelShare (0: no SoloRelabel after the silence trim).")
    var soloRelabelShare: Double?
    @Option(name: .customLong("orphan-voice-seconds"), help: "Also score the overlap pass with its orphan voice (OverlapTurns step 4) at this much speech (0: not scored; default: DiarizerConfig.orphanVoiceSeconds; with --num-speakers no voice is made, as in speakerkit).")
    var orphanVoiceSeconds: Double?
    @Option(name: .customLong("silence-trim"), help: "Override DiarizerConfig.default.silenceTrim (1: cut the silence both the loudness track and the segmentation hear from the turns before the overlap pass, as speakerkit does; 0: not).")
    var silenceTrim: Int?
    @Option(name: .customLong("overlap-step"), help: "Seconds between the 10 s segmentation windows (default 10: each sample once).") var overlapStep: Double?
    @Option(help: "Write each file's frames (span, window, embedding, final speaker), final turns, live turns (the first labels published over each stretch) and segmentation windows (local speakers' masks) as JSON into this folder.")
    var dump: String?
    @Option(name: .customLong("log-level"), help: "The diarizer's log level (trace, debug, …; default warning): debug shows each live pass, taken or not.")
    var logLevel: String?
    @Option(name: .customLong("settle-seconds"), help: "Also score the labels as they stood this many seconds after each moment was first labelled, comma-separated (SettledLabels: 0 is live DER, a long one the final turns before the overlap pass).")
    var settleSeconds: String?
    @Flag(help: "Print every file's figures.") var verbose = false
    @Flag(help: "Also measure known-speaker false acceptance: see EnrolmentTally.") var enrolment = false
    @Flag(name: .customLong("known-speakers"), help: "Run every file again with the set's people enrolled and judge the names at finalize: see KnownSpeakerTrial.")
    var knownSpeakers = false

    func run() throws {
        var config = DiarizerConfig.default
        var extractor: SpeakerEmbeddingExtractor?
        if let embeddingModel {
            let path = embeddingModel == VendoredCampPlus.name ? VendoredCampPlus.path : embeddingModel
            extractor = try SpeakerEmbeddingExtractor(modelPath: path)
            let thresholds = try modelThresholds.map { try JSONDecoder().decode([String: Double].self, from: Data($0.utf8)) } ?? [:]
            config = EmbeddingModelThresholds.diarizerConfig(thresholds)
        }
        if let speakerThreshold { config.speakerThreshold = speakerThreshold }
        if let clusterThreshold { config.clusterThreshold = clusterThreshold }
        if let offline { config.offlineClustering = offline }
        if let switchPenalty { config.switchPenalty = switchPenalty }
        if let minimumCountGain { config.minimumCountGain = minimumCountGain }
        if let minimumCountCoherence { config.minimumCountCoherence = minimumCountCoherence }
        if let pairwiseTurns {
            guard let rule = PairwiseTurns(rawValue: pairwiseTurns) else {
                throw ValidationError("--pairwise-turns: \(pairwiseTurns) is not one of \(PairwiseTurns.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            config.pairwiseTurns = rule
        }
        if let pauseDecibels { config.speakerChangePauseDecibels = pauseDecibels }
        if let pauseSeconds { config.speakerChangePauseSeconds = pauseSeconds }
        if let frameSeconds { config.frameSeconds = frameSeconds }
        if let windowSeconds { config.windowSeconds = windowSeconds }
        if let minimumBatch { config.minimumBatch = minimumBatch }
        if let analysisBlock { config.analysisBlockSeconds = analysisBlock }
        if let stretchFrames { config.minimumStretchFrames = stretchFrames }
        if let uncountedVoiceMargin { config.uncountedVoiceMargin = uncountedVoiceMargin }
        if let uncountedVoiceSeconds { config.uncountedVoiceSeconds = uncountedVoiceSeconds }
        if let liveReclusterSeconds { config.liveReclusterSeconds = liveReclusterSeconds }
        if let liveSoloSeconds { config.liveSoloSpeakerSeconds = liveSoloSeconds }
        if let numberFoundingSeconds { config.numberFoundingSeconds = numberFoundingSeconds }
        if let orphanVoiceSeconds { config.orphanVoiceSeconds = orphanVoiceSeconds }
        if let silenceTrim { config.silenceTrim = silenceTrim != 0 }
        if let soloRelabelShare { config.soloRelabelShare = soloRelabelShare }
        if segmentedSplit { config.segmentedVoiceSplit = true }
        var vad = VADConfig.default
        if let vadMinSilence { vad.minSilenceDurationSeconds = vadMinSilence }
        if let vadThreshold { vad.threshold = vadThreshold }
        if let vadPad { vad.speechPadSeconds = vadPad }
        if let vadMaxSpeech { vad.maxSpeechDurationSeconds = vadMaxSpeech }
        var managerConfig = config.speakerManagerConfig
        if let extractor { managerConfig.embeddingDimension = extractor.dimension }
        var logger = Logger(label: "diarize-bench")
        logger.logLevel = .warning
        if let logLevel {
            guard let level = Logger.Level(rawValue: logLevel) else {
                throw ValidationError("--log-level: \(logLevel) is not one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            logger.logLevel = level
        }
        let encoder = try SpeakerEncoder(logger: logger)
        // The model's embeddings, as `speakerkit.NAME` computes them, or speakerkit's GE2E.
        func makeEmbedder() -> any SpeakerEmbedder {
            extractor.map { SherpaOnnxEmbedder(extractor: $0) } ?? GE2EEmbedder(encoder: encoder)
        }
        let reference = try RTTM.parse(String(contentsOfFile: rttm, encoding: .utf8))
        let scored = try uem.map { try UEM.parse(String(contentsOfFile: $0, encoding: .utf8)) }
        let files = try EvalCorpus.expandAudioPaths([audio]).map(\.path)
        if let dump { try FileManager.default.createDirectory(atPath: dump, withIntermediateDirectories: true) }

        var total = DERComponents.zero, totalC0 = DERComponents.zero, live = DERComponents.zero
        let settles = try (settleSeconds ?? "").split(separator: ",").map { text -> Double in
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value >= 0 else {
                throw ValidationError("--settle-seconds: '\(text)' is not a number of seconds ≥ 0")
            }
            return value
        }
        var settled = [DERComponents](repeating: .zero, count: settles.count)
        var numbersKept = SpeakerNumberKeeping.zero
        var audioSeconds = 0.0, vadCPU = 0.0, embedCPU = 0.0, allCPU = 0.0
        var exactCounts = 0, frames = 0
        let segmenter: PyannoteSegmenter? = noOverlap ? nil
            : overlapModel.map { PyannoteSegmenter(modelPath: $0, maximumRunners: 1) } ?? PyannoteSegmenter.vendored(maximumRunners: 1)
        var withOverlap = DERComponents.zero, withOverlapC0 = DERComponents.zero, segmentationCPU = 0.0
        var withOrphan = DERComponents.zero, withOrphanC0 = DERComponents.zero, overlapExact = 0, orphanExact = 0
        var tally = EnrolmentTally(thresholds: [config.speakerThreshold, 0.4, 0.3, 0.2, 0.15, 0.1])
        var trial = KnownSpeakerTrial()
        for file in files {
            let id = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
            let buffer = try WAVFile.read(contentsOf: URL(fileURLWithPath: file))
            guard buffer.sampleRate == config.sampleRate else {
                throw ValidationError("\(file): \(buffer.sampleRate) Hz; this benchmark takes \(config.sampleRate) Hz audio")
            }
            let detector = TimedDetector(SileroSpeechDetector(detector: try SileroVoiceActivityDetector(config: vad, logger: logger)))
            let embedder = TimedEmbedder(makeEmbedder())
            let diarizer = StreamingDiarizer(
                config: config, hint: SpeakerCountHint(exact: numSpeakers), detector: detector, embedder: embedder,
                speakers: try SpeakerManager(config: managerConfig, logger: logger), logger: logger)
            diarizer.embeddingStride = embeddingStride
            let tracker = segmenter.map { OverlapTracker(segmenter: $0, stepSeconds: overlapStep) }
            let segmentationCPUAtStart = segmentationCPU
            var turns: [UInt64: DiarizerTurn] = [:]
            // What a device saw live, kept as the server keeps it: each stretch of time with the label of
            // the first turns published over it.
            var liveTimeline = LiveTurnTimeline()
            var settling = SettledLabels()
            var pushedSeconds = 0.0
            func collect() {
                let published = diarizer.pullTurns()
                if !settles.isEmpty {
                    settling.update(nowSeconds: pushedSeconds, changes: published.map {
                        SettledLabels.Change(id: String($0.id), speaker: String($0.speaker), startSeconds: $0.startSeconds,
                                             endSeconds: $0.endSeconds, isRemoved: $0.isRemoved)
                    })
                }
                liveTimeline.published(published.filter { !$0.isRemoved }.map {
                    SpeakerTurn(id: String($0.id), speaker: String($0.speaker), startSeconds: $0.startSeconds, endSeconds: $0.endSeconds)
                })
                for turn in published {
                    if turn.isRemoved { turns[turn.id] = nil } else { turns[turn.id] = turn }
                }
            }
            let started = threadCPUSeconds()
            let wallStart = Date()
            for start in stride(from: 0, to: buffer.samples.count, by: chunk) {
                let end = min(buffer.samples.count, start + chunk)
                if pace > 0 {
                    // A chunk is due once its audio has been "recorded": its end time, scaled by the pace.
                    let due = Double(end) / Double(buffer.sampleRate) / pace
                    let wait = due - Date().timeIntervalSince(wallStart)
                    if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                }
                let piece = Array(buffer.samples[start ..< end])
                try diarizer.push(piece)
                pushedSeconds = Double(end) / Double(buffer.sampleRate)
                collect()
                if let tracker {
                    // As the plugin does, in the pushes' pieces (its CPU is counted apart from the diarizer's).
                    let segmentationStarted = threadCPUSeconds()
                    let finished = tracker.windows.count
                    try tracker.push(piece)
                    segmentationCPU += threadCPUSeconds() - segmentationStarted
                    // The windows this piece finished reach the diarizer before its next push, as the plugin's do.
                    for window in tracker.windows[finished...] { diarizer.heard(window) }
                }
            }
            if let tracker {
                let segmentationStarted = threadCPUSeconds()
                try tracker.finish()
                segmentationCPU += threadCPUSeconds() - segmentationStarted
                diarizer.localActivity = tracker.windows
            }
            try diarizer.finalize()
            collect()
            let cpu = threadCPUSeconds() - started - (segmentationCPU - segmentationCPUAtStart)
            let seconds = Double(buffer.samples.count) / Double(buffer.sampleRate)
            audioSeconds += seconds
            allCPU += cpu
            vadCPU += detector.cpuSeconds
            embedCPU += embedder.cpuSeconds.withLock { $0 }
            frames += diarizer.embeddedFrameCount

            let hypothesis = turns.values.map(\.segment)
            let truth = reference[id] ?? []
            let spans = scored?[id]
            /// The final turns with the overlap pass's spans added, scored at collar 0.25 and 0.
            func augmentedScores(_ added: [OverlapTurns.Span], base: [SpeakerSegment]) -> (segments: [SpeakerSegment], der: DERComponents, derC0: DERComponents) {
                let segments = base + added.map { SpeakerSegment(speaker: String($0.speaker), startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
                return (segments, DiarizationErrorRate.score(reference: truth, hypothesis: segments, uem: spans, config: DERConfig(collarSeconds: 0.25)),
                        DiarizationErrorRate.score(reference: truth, hypothesis: segments, uem: spans, config: DERConfig(collarSeconds: 0)))
            }
            let der = DiarizationErrorRate.score(reference: truth, hypothesis: hypothesis, uem: spans, config: DERConfig(collarSeconds: 0.25))
            let derC0 = DiarizationErrorRate.score(reference: truth, hypothesis: hypothesis, uem: spans, config: DERConfig(collarSeconds: 0))
            total = total + der
            totalC0 = totalC0 + derC0
            let liveSegments = liveTimeline.segments.map { SpeakerSegment(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
            let liveDER = DiarizationErrorRate.score(reference: truth, hypothesis: liveSegments, uem: spans, config: DERConfig(collarSeconds: 0.25))
            live = live + liveDER
            for (index, settle) in settles.enumerated() {
                settled[index] = settled[index] + DiarizationErrorRate.score(reference: truth, hypothesis: settling.segments(settleSeconds: settle), uem: spans,
                                                                             config: DERConfig(collarSeconds: 0.25))
            }
            let kept = SpeakerNumberKeeping(reference: truth, liveTurns: liveSegments, finalTurns: hypothesis, uem: spans)
            numbersKept = numbersKept + kept
            let found = Set(hypothesis.map(\.speaker)).count, expected = Set(truth.map(\.speaker)).count
            if found == expected { exactCounts += 1 }
            if let tracker {
                // As speakerkit's finalize: the silence both detectors hear cut from the turns first.
                let silences = diarizer.agreedSilences(windows: tracker.windows)
                var turnSpans = turns.values.flatMap {
                    SilenceTrim.pieces(of: OverlapTurns.Span(speaker: $0.speaker, startSeconds: $0.startSeconds, endSeconds: $0.endSeconds),
                                       silences: silences)
                }
                if config.soloRelabelShare > 0 {
                    // As speakerkit's finalize: then moments the segmentation hears one person alone go to them.
                    let relabelled = SoloRelabel.relabelled(turnSpans, windows: tracker.windows, trustedShare: config.soloRelabelShare)
                    turnSpans = relabelled.pieces.flatMap { $0 } + relabelled.given
                    if verbose {
                        print("\(id): solo relabel gave \(relabelled.given.count) stretches, \(f(relabelled.given.reduce(0) { $0 + $1.endSeconds - $1.startSeconds }, 2)) s"
                            + relabelled.given.map { " [\($0.speaker) \(f($0.startSeconds, 2))–\(f($0.endSeconds, 2))]" }.joined())
                    }
                }
                let trimmedHypothesis = turnSpans.map { SpeakerSegment(speaker: String($0.speaker), startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
                let pauses = fillMissedOutsidePauses ? diarizer.loudnessPauses() : []
                let added = OverlapTurns.added(to: turnSpans, windows: tracker.windows, fillsMissedSpeech: fillMissed, outside: pauses)
                let (augmented, scoredAgain, scoredAgainC0) = augmentedScores(added, base: trimmedHypothesis)
                withOverlap = withOverlap + scoredAgain
                withOverlapC0 = withOverlapC0 + scoredAgainC0
                if Set(augmented.map(\.speaker)).count == expected { overlapExact += 1 }
                if config.orphanVoiceSeconds > 0 {
                    // The voice as speakerkit makes it (none with --num-speakers).
                    let orphan = diarizer.orphanVoice(finalSpeakers: Set(turnSpans.map(\.speaker)))
                    let (withVoice, scoredOrphan, scoredOrphanC0) = augmentedScores(
                        OverlapTurns.added(to: turnSpans, windows: tracker.windows, fillsMissedSpeech: fillMissed, outside: pauses, orphanVoice: orphan),
                        base: trimmedHypothesis)
                    withOrphan = withOrphan + scoredOrphan
                    withOrphanC0 = withOrphanC0 + scoredOrphanC0
                    let voices = Set(withVoice.map(\.speaker)).count
                    if voices == expected { orphanExact += 1 }
                    if verbose {
                        print("\(id): with orphan voice DER c0.25 \(percent(scoredOrphan.errorRate)) (miss \(f(scoredOrphan.missedSeconds, 1)) s, FA \(f(scoredOrphan.falseAlarmSeconds, 1)) s, "
                            + "conf \(f(scoredOrphan.confusionSeconds, 1)) s), speakers \(voices)/\(expected)")
                    }
                }
                if verbose {
                    print("\(id): with overlap DER c0.25 \(percent(scoredAgain.errorRate)) (miss \(f(scoredAgain.missedSeconds, 1)) s, FA \(f(scoredAgain.falseAlarmSeconds, 1)) s, "
                        + "conf \(f(scoredAgain.confusionSeconds, 1)) s), \(added.count) spans added, \(f(added.reduce(0) { $0 + $1.endSeconds - $1.startSeconds }, 1)) s")
                }
            }
            if verbose {
                print("\(id): DER c0.25 \(percent(der.errorRate)) (miss \(f(der.missedSeconds, 1)) s, FA \(f(der.falseAlarmSeconds, 1)) s, "
                    + "conf \(f(der.confusionSeconds, 1)) s), live \(percent(liveDER.errorRate)), speakers \(found)/\(expected), numbers kept \(kept.keptCount)/\(kept.introducedCount), RTF \(f(cpu / seconds, 4))")
            }
            if let dump {
                try write(frames: diarizer.frames, turns: hypothesis, liveTurns: liveSegments, windows: tracker?.windows ?? [], id: id, to: dump)
            }
            if enrolment { tally.add(frames: diarizer.frames, reference: truth) }
            if knownSpeakers { trial.addProfiles(frames: diarizer.frames, reference: truth, recording: id) }
        }
        print("files \(files.count), audio \(f(audioSeconds, 1)) s, frames embedded \(frames)")
        print("DER c0.25 \(percent(total.errorRate)) (miss \(percent(total.missedSeconds / total.referenceSeconds)), "
            + "FA \(percent(total.falseAlarmSeconds / total.referenceSeconds)), conf \(percent(total.confusionSeconds / total.referenceSeconds))); "
            + "DER c0 \(percent(totalC0.errorRate)); speaker count exact \(exactCounts)/\(files.count)")
        print("live DER c0.25 \(percent(live.errorRate)) (the first labels published over each stretch; miss \(percent(live.missedSeconds / live.referenceSeconds)), "
            + "FA \(percent(live.falseAlarmSeconds / live.referenceSeconds)), conf \(percent(live.confusionSeconds / live.referenceSeconds)))")
        for (settle, score) in zip(settles, settled) {
            print("settled \(f(settle, 1)) s after first labelled: DER c0.25 \(percent(score.errorRate)) (conf \(percent(score.confusionSeconds / score.referenceSeconds)))")
        }
        print("speaker numbers kept \(numbersKept.keptCount)/\(numbersKept.introducedCount) (people shown live under a number of their own who still have it at the end)")
        print("CPU per audio second (one thread): total \(f(allCPU / audioSeconds, 4)), VAD \(f(vadCPU / audioSeconds, 4)), "
            + "embedding \(f(embedCPU / audioSeconds, 4)), rest \(f((allCPU - vadCPU - embedCPU) / audioSeconds, 4))")
        if segmenter != nil {
            print("with overlap: DER c0.25 \(percent(withOverlap.errorRate)) (miss \(percent(withOverlap.missedSeconds / withOverlap.referenceSeconds)), "
                + "FA \(percent(withOverlap.falseAlarmSeconds / withOverlap.referenceSeconds)), conf \(percent(withOverlap.confusionSeconds / withOverlap.referenceSeconds))); "
                + "DER c0 \(percent(withOverlapC0.errorRate)); speaker count exact \(overlapExact)/\(files.count); segmentation CPU per audio second \(f(segmentationCPU / audioSeconds, 4))")
            if config.orphanVoiceSeconds > 0 {
                print("with overlap and orphan voice (\(f(config.orphanVoiceSeconds, 1)) s): DER c0.25 \(percent(withOrphan.errorRate)) (miss \(percent(withOrphan.missedSeconds / withOrphan.referenceSeconds)), "
                    + "FA \(percent(withOrphan.falseAlarmSeconds / withOrphan.referenceSeconds)), conf \(percent(withOrphan.confusionSeconds / withOrphan.referenceSeconds))); "
                    + "DER c0 \(percent(withOrphanC0.errorRate)); speaker count exact \(orphanExact)/\(files.count)")
            }
        }
        if enrolment { print(tally.report) }
        if knownSpeakers {
            func finalTurns(_ samples: [Float], enrolled: [Int32: KnownSpeakerTrial.Profile]) throws -> [DiarizerTurn] {
                let manager = try SpeakerManager(config: managerConfig, logger: logger)
                try manager.initializeKnownSpeakers(KnownSpeakerTrial.knownSpeakers(enrolled), mode: .overwrite, preserveIfPermanent: false)
                let diarizer = StreamingDiarizer(
                    config: config, hint: SpeakerCountHint(exact: numSpeakers),
                    detector: SileroSpeechDetector(detector: try SileroVoiceActivityDetector(config: vad, logger: logger)),
                    embedder: makeEmbedder(), speakers: manager, logger: logger)
                var turns: [UInt64: DiarizerTurn] = [:]
                for start in stride(from: 0, to: samples.count, by: chunk) {
                    try diarizer.push(Array(samples[start ..< min(samples.count, start + chunk)]))
                    for turn in diarizer.pullTurns() { turns[turn.id] = turn.isRemoved ? nil : turn }
                }
                try diarizer.finalize()
                for turn in diarizer.pullTurns() { turns[turn.id] = turn.isRemoved ? nil : turn }
                return Array(turns.values)
            }
            for file in files {
                let id = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
                let samples = try WAVFile.read(contentsOf: URL(fileURLWithPath: file)).samples
                for run in trial.enrolments(for: id) {
                    trial.judge(turns: try finalTurns(samples, enrolled: run.enrolled), reference: reference[id] ?? [], uem: scored?[id], recording: id,
                                enrolment: run.enrolled, scenario: run.scenario)
                }
            }
            print(trial.report)
        }
    }

    /// One file's frames, final turns, live turns and (with the overlap pass) segmentation windows, for analysis.
    private func write(frames: [DiarizerFrame], turns: [SpeakerSegment], liveTurns: [SpeakerSegment], windows: [LocalActivityWindow], id: String, to folder: String) throws {
        let rows: [[String: Any]] = frames.map { frame in
            var row: [String: Any] = ["start": frame.startSeconds, "end": frame.endSeconds, "window": frame.windowSeconds]
            if let embedding = frame.embedding { row["embedding"] = embedding.map(Double.init) }
            if let speaker = frame.speaker { row["speaker"] = Int(speaker) }
            return row
        }
        func turnRows(_ turns: [SpeakerSegment]) -> [[String: Any]] { turns.map { ["speaker": $0.speaker, "start": $0.startSeconds, "end": $0.endSeconds] } }
        let windowRows: [[String: Any]] = windows.map {
            ["first_centre": $0.firstCentreSeconds, "step": $0.frameStepSeconds, "masks": $0.activeMasks.map(Int.init)]
        }
        let data = try JSONSerialization.data(withJSONObject: ["id": id, "frames": rows, "turns": turnRows(turns), "live_turns": turnRows(liveTurns), "windows": windowRows])
        try data.write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent("\(id).json")))
    }

    private func percent(_ value: Double) -> String { String(format: "%.1f %%", value * 100) }
    private func f(_ value: Double, _ decimals: Int) -> String { String(format: "%.\(decimals)f", value) }
}

/// This thread's CPU time: the diarizer runs on the calling thread (OpenBLAS is configured single-threaded).
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Counts the CPU the VAD spends.
final class TimedDetector: SpeechDetector {
    let inner: any SpeechDetector
    var cpuSeconds = 0.0

    init(_ inner: any SpeechDetector) { self.inner = inner }

    func accept(samples: [Float]) {
        let started = threadCPUSeconds()
        inner.accept(samples: samples)
        cpuSeconds += threadCPUSeconds() - started
    }
    func popSegments() -> [SpeechSpan] { inner.popSegments() }
    var ongoingSpeechStartSeconds: Double? { inner.ongoingSpeechStartSeconds }
    var analyzedSeconds: Double { inner.analyzedSeconds }
    func flush() {
        let started = threadCPUSeconds()
        inner.flush()
        cpuSeconds += threadCPUSeconds() - started
    }
}

/// Counts the CPU the speaker encoder spends.
final class TimedEmbedder: SpeakerEmbedder {
    let inner: any SpeakerEmbedder
    let cpuSeconds = Mutex(0.0)

    init(_ inner: any SpeakerEmbedder) { self.inner = inner }

    var dimension: Int { inner.dimension }
    func embed(_ windows: [[Float]]) throws -> [[Float]] {
        let started = threadCPUSeconds()
        defer { cpuSeconds.withLock { $0 += threadCPUSeconds() - started } }
        return try inner.embed(windows)
    }
}

extension OfflineClustering: ExpressibleByArgument {}
