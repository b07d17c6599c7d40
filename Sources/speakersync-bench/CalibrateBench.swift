import ArgumentParser
import DiarizationModels
import DiarizationScoring
import Foundation
import Logging
import SherpaOnnxSpeakers
import SpeakerEmbedding
import SpeakerSyncAudio
import SpeakerSyncEval
import StreamingDiarization

/// Thresholds for an embedding model, from labelled meetings: embeddings of windows where exactly one
/// reference speaker talks, by the model and by GE2E (whose thresholds speakerkit tuned), cosine
/// distances of every pair within a recording (same voice, different voices), and each GE2E threshold
/// carried over to the model's distances (`EmbeddingCalibration`). Prints the figures and the
/// provider-config entry (`"thresholds"`) for the model; sherpa-onnx's `offline` threshold is left at its
/// default (an equal-error rule split voices there). Calibrate on one set and measure on another
/// (docs/accuracy.md does: synthetic seeds it never scores, then fresh seeds and ami-dev).
struct CalibrateBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Thresholds for a speaker embedding model (GE2E, or a sherpa-onnx ONNX model) from labelled audio.")

    @Option(help: "A folder of 16 kHz WAV files (or one WAV file).") var audio: String
    @Option(help: "Reference RTTM for the files.") var rttm: String
    @Option(name: .customLong("embedding-model"), help: "A sherpa-onnx speaker embedding ONNX model (default: GE2E, speakerkit's).")
    var embeddingModel: String?
    @Option(name: .customLong("window-seconds"), help: "Audio per embedding, as the live diarizer embeds it.") var windowSeconds = 1.5
    @Option(name: .customLong("max-windows"), help: "At most this many windows per speaker per file, spread over their speech.")
    var maxWindows = 24

    func run() throws {
        var logger = Logger(label: "calibrate")
        logger.logLevel = .warning
        let ge2e = try calibrate(GE2EEmbedder(encoder: try SpeakerEncoder(logger: logger)), name: "GE2E")
        let tuned = DiarizerConfig.default
        let ge2eThresholds: [String: Double] = [
            "speaker": Double(tuned.speakerThreshold), "embedding": Double(tuned.embeddingThreshold),
            "cluster": Double(tuned.clusterThreshold), "enrolled": Double(tuned.enrolledSpeakerThreshold),
        ]
        guard let embeddingModel else {
            print("GE2E's tuned thresholds: " + ge2eThresholds.keys.sorted().map { "\($0) \(ge2eThresholds[$0]!)" }.joined(separator: ", "))
            return
        }
        let name = URL(fileURLWithPath: embeddingModel).lastPathComponent
        let model = try calibrate(SherpaOnnxEmbedder(extractor: try SpeakerEmbeddingExtractor(modelPath: embeddingModel)), name: name)
        var thresholds = model.frames.thresholds(matching: ge2eThresholds.filter { $0.key != "enrolled" }, of: ge2e.frames)
        // The enrolled check compares a whole speaker's centroid with a person's profile: carried over
        // on centroid distances, not frame distances.
        if let modelCentroids = model.centroids, let ge2eCentroids = ge2e.centroids {
            thresholds["enrolled"] = (modelCentroids.matched(ge2eThresholds["enrolled"]!, from: ge2eCentroids) * 1000).rounded() / 1000
        }
        for key in thresholds.keys.sorted() {
            if let from = ge2eThresholds[key] {
                let scale = key == "enrolled" ? ge2e.centroids ?? ge2e.frames : ge2e.frames
                print(String(format: "%@: GE2E %.3f (%.0f %% of %@ pairs within) -> %.3f", key, from, scale.position(of: from) * 100,
                             key == "enrolled" ? "centroid" : "window", thresholds[key]!))
            }
        }
        let entry = thresholds.keys.sorted().map { "\"\($0)\": \(thresholds[$0]!)" }.joined(separator: ", ")
        print("provider config entry: {\"path\": \"\(embeddingModel)\", \"thresholds\": {\(entry)}}")
    }

    /// Every same-voice and different-voice distance of `embedder` on the set, between windows and
    /// between centroids (each speaker's odd and even windows; different speakers' centroids).
    func calibrate(_ embedder: any SpeakerEmbedder, name: String) throws -> (frames: EmbeddingCalibration, centroids: EmbeddingCalibration?) {
        let reference = try RTTM.parse(String(contentsOfFile: rttm, encoding: .utf8))
        var same: [Double] = [], different: [Double] = []
        var centroidSame: [Double] = [], centroidDifferent: [Double] = []
        var windowCount = 0
        let started = Date()
        for file in try EvalCorpus.expandAudioPaths([audio]).map(\.path) {
            let id = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
            guard let segments = reference[id] else { continue }
            let buffer = try WAVFile.read(contentsOf: URL(fileURLWithPath: file))
            guard buffer.sampleRate == 16_000 else { throw ValidationError("\(file): \(buffer.sampleRate) Hz; calibrate takes 16 kHz audio") }
            var embedded: [(speaker: String, embedding: [Float])] = []
            for (speaker, windows) in Self.soloWindows(segments, windowSeconds: windowSeconds, maxPerSpeaker: maxWindows) {
                // A reference turn past the audio's end (an RTTM of another recording with the same id)
                // gives windows the file does not hold: those are skipped, not sliced out of range.
                let audio = windows.compactMap { window -> [Float]? in
                    let start = max(0, Int(window.lowerBound * 16_000)), end = min(buffer.samples.count, Int(window.upperBound * 16_000))
                    guard end - start >= SpeakerEmbeddingExtractor.minimumSampleCount else { return nil }
                    return Array(buffer.samples[start ..< end])
                }
                for embedding in try embedder.embed(audio) { embedded.append((speaker, embedding)) }
            }
            windowCount += embedded.count
            var halves: [(speaker: String, centroid: [Float])] = []
            for speaker in Set(embedded.map(\.speaker)).sorted() {
                let mine = embedded.filter { $0.speaker == speaker }.map(\.embedding)
                guard mine.count >= 2 else { continue }
                for parity in 0 ..< 2 {
                    let half = mine.indices.filter { $0 % 2 == parity }.map { mine[$0] }
                    halves.append((speaker, Self.centroid(half)))
                }
            }
            for i in halves.indices {
                for j in halves.indices where j > i {
                    let distance = EmbeddingCalibration.cosineDistance(halves[i].centroid, halves[j].centroid)
                    if halves[i].speaker == halves[j].speaker { centroidSame.append(distance) } else { centroidDifferent.append(distance) }
                }
            }
            for i in embedded.indices {
                for j in embedded.indices where j > i {
                    let distance = EmbeddingCalibration.cosineDistance(embedded[i].embedding, embedded[j].embedding)
                    if embedded[i].speaker == embedded[j].speaker { same.append(distance) } else { different.append(distance) }
                }
            }
        }
        guard let calibration = EmbeddingCalibration(sameDistances: same, differentDistances: different) else {
            throw ValidationError("no file had two reference speakers with \(windowSeconds) s of solo speech each: nothing to calibrate on")
        }
        print(String(format: "%@: %d windows, %d same-voice and %d different-voice pairs (%.1f s); cosine distance medians: same voice %.3f, "
                        + "different voices %.3f; equal error rate %.1f %% at %.3f", name, windowCount, calibration.samePairs,
                     calibration.differentPairs, Date().timeIntervalSince(started), calibration.sameMedian, calibration.differentMedian,
                     calibration.equalErrorRate * 100, calibration.equalErrorDistance))
        let centroids = EmbeddingCalibration(sameDistances: centroidSame, differentDistances: centroidDifferent)
        if let centroids {
            print(String(format: "  centroids: %d same-voice, %d different-voice pairs; medians %.3f and %.3f", centroids.samePairs,
                         centroids.differentPairs, centroids.sameMedian, centroids.differentMedian))
        }
        return (calibration, centroids)
    }

    static func centroid(_ embeddings: [[Float]]) -> [Float] {
        var sum = [Float](repeating: 0, count: embeddings[0].count)
        for embedding in embeddings {
            let norm = max(1e-9, embedding.reduce(0) { $0 + $1 * $1 }.squareRoot())
            for i in sum.indices { sum[i] += embedding[i] / norm }
        }
        return sum
    }

    /// Per speaker, windows of `windowSeconds` inside their solo speech (no other reference speaker),
    /// at most `maxPerSpeaker`, evenly spread over all of them.
    static func soloWindows(_ segments: [SpeakerSegment], windowSeconds: Double, maxPerSpeaker: Int) -> [(String, [Range<Double>])] {
        var bySpeaker: [String: [Range<Double>]] = [:]
        for segment in segments {
            // The segment minus every other speaker's segments.
            var pieces = [segment.startSeconds ..< segment.endSeconds]
            for other in segments where other.speaker != segment.speaker {
                pieces = pieces.flatMap { piece -> [Range<Double>] in
                    guard other.startSeconds < piece.upperBound, other.endSeconds > piece.lowerBound else { return [piece] }
                    return [piece.lowerBound ..< max(piece.lowerBound, other.startSeconds), min(piece.upperBound, other.endSeconds) ..< piece.upperBound]
                        .filter { !$0.isEmpty }
                }
            }
            for piece in pieces {
                var start = piece.lowerBound
                while start + windowSeconds <= piece.upperBound {
                    bySpeaker[segment.speaker, default: []].append(start ..< start + windowSeconds)
                    start += windowSeconds
                }
            }
        }
        return bySpeaker.keys.sorted().map { speaker in
            let all = bySpeaker[speaker]!
            guard all.count > maxPerSpeaker else { return (speaker, all) }
            let step = Double(all.count) / Double(maxPerSpeaker)
            return (speaker, (0 ..< maxPerSpeaker).map { all[Int(Double($0) * step)] })
        }
    }
}
