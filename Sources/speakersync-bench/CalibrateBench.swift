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
/// reference speaker talks, cosine distances of every pair within a recording (same voice, different
/// voices), and the operating points `EmbeddingCalibration` reads off them. Prints the figures and the
/// provider-config entry (`"thresholds"`) for the model. Calibrate on one set and measure on another
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
        let embedder: any SpeakerEmbedder
        let name: String
        if let embeddingModel {
            embedder = SherpaOnnxEmbedder(extractor: try SpeakerEmbeddingExtractor(modelPath: embeddingModel))
            name = URL(fileURLWithPath: embeddingModel).lastPathComponent
        } else {
            embedder = GE2EEmbedder(encoder: try SpeakerEncoder(logger: logger))
            name = "GE2E"
        }
        let reference = try RTTM.parse(String(contentsOfFile: rttm, encoding: .utf8))
        var same: [Double] = [], different: [Double] = []
        var windowCount = 0
        let started = Date()
        for file in try EvalCorpus.expandAudioPaths([audio]).map(\.path) {
            let id = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
            guard let segments = reference[id] else { continue }
            let buffer = try WAVFile.read(contentsOf: URL(fileURLWithPath: file))
            guard buffer.sampleRate == 16_000 else { throw ValidationError("\(file): \(buffer.sampleRate) Hz; calibrate takes 16 kHz audio") }
            var embedded: [(speaker: String, embedding: [Float])] = []
            for (speaker, windows) in Self.soloWindows(segments, windowSeconds: windowSeconds, maxPerSpeaker: maxWindows) {
                let audio = windows.map { window in
                    Array(buffer.samples[max(0, Int(window.lowerBound * 16_000)) ..< min(buffer.samples.count, Int(window.upperBound * 16_000))])
                }
                for embedding in try embedder.embed(audio) { embedded.append((speaker, embedding)) }
            }
            windowCount += embedded.count
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
        print(String(format: "%@: %d windows, %d same-voice and %d different-voice pairs (%.0f s)", name, windowCount,
                     calibration.samePairs, calibration.differentPairs, Date().timeIntervalSince(started)))
        print(String(format: "cosine distance medians: same voice %.3f, different voices %.3f", calibration.sameMedian, calibration.differentMedian))
        print(String(format: "equal error rate %.1f %% at distance %.3f; 1 %% of different-voice pairs within %.3f",
                     calibration.equalErrorRate * 100, calibration.equalErrorDistance, calibration.onePercentFalseAcceptDistance))
        let thresholds = calibration.thresholds.keys.sorted().map { "\"\($0)\": \(calibration.thresholds[$0]!)" }.joined(separator: ", ")
        print("provider config entry: {\"path\": \"\(embeddingModel ?? "(GE2E: speakerkit's built-in defaults apply)")\", \"thresholds\": {\(thresholds)}}")
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
