import Foundation
import Logging

/// The GE2E speaker encoder whose weights ship in resemblyzer 0.1.4 (pretrained.pt, converted to
/// ge2e.bin by scripts/setup): 16 kHz audio → 40-band mel power frames → 3×256 LSTM → 256-dim
/// L2-normalised embedding, where cosine similarity says how alike two voices are.
///
/// resemblyzer's webrtcvad silence trimming is not reproduced: the diarizer hands over speech regions
/// chosen by its own VAD. Volume normalisation is, per utterance or per window (see the config).
///
/// Immutable after init, so one encoder can serve every session's queue at once; each call allocates
/// its own scratch.
public final class SpeakerEncoder: Sendable {
    public static let sampleRate = MelFrontEnd.sampleRate
    public static let embeddingSize = GE2EWeights.embeddingSize
    /// Mel frames in one partial window (1.6 s at the 10 ms hop).
    public static let partialFrameCount = PartialWindows.frameCount
    /// Samples in one partial window.
    public static let partialSampleCount = PartialWindows.frameCount * MelFrontEnd.hopLength
    /// The shortest window `embed(sampleWindows:)` accepts: one STFT frame.
    public static let minimumWindowSampleCount = MelFrontEnd.fftLength

    public let config: SpeakerEmbeddingConfig
    /// The weights file in use.
    public let modelURL: URL
    private let network: GE2ENetwork
    private let frontEnd = MelFrontEnd()

    public init(config: SpeakerEmbeddingConfig = .default, logger: Logger) throws {
        guard config.partialsPerSecond > 0,
              (1 ... PartialWindows.frameCount).contains(PartialWindows.frameStep(partialsPerSecond: config.partialsPerSecond))
        else {
            throw SpeakerEmbeddingError(
                .invalidConfig, "partialsPerSecond \(config.partialsPerSecond) must put partials 1 to 160 frames apart (about 0.63 to 200 per second)")
        }
        guard config.minimumCoverage > 0, config.minimumCoverage <= 1 else {
            throw SpeakerEmbeddingError(.invalidConfig, "minimumCoverage \(config.minimumCoverage) must be in (0, 1]")
        }
        guard config.maximumBatchSize >= 1 else {
            throw SpeakerEmbeddingError(.invalidConfig, "maximumBatchSize \(config.maximumBatchSize) must be at least 1")
        }
        guard config.targetLevelDBFS.isFinite else {
            throw SpeakerEmbeddingError(.invalidConfig, "targetLevelDBFS must be finite")
        }
        let url = try config.modelPath ?? GE2EModelLocator.locate()
        let started = ContinuousClock.now
        network = GE2ENetwork(weights: try GE2EModelFile.read(contentsOf: url))
        let blas = BLAS.configure()
        self.config = config
        modelURL = url
        if let replaced = blas.replacedCoreName {
            logger.info("OpenBLAS did not recognise this CPU and chose \(replaced) kernels; using \(blas.coreName), which its features support (set OPENBLAS_CORETYPE to override)")
        }
        logger.debug("loaded GE2E speaker encoder", metadata: [
            "path": "\(url.path)", "openblas_core": "\(blas.coreName)",
            "seconds": "\(ContinuousClock.now - started)",
        ])
    }

    /// The mel power frames resemblyzer computes for `samples` (16 kHz, after any volume
    /// normalisation the caller wants): 1 + count/160 frames, frame t centred on sample 160·t.
    public func melSpectrogram(samples: [Float], sampleRate: Int) throws -> MelSpectrogram {
        try check(sampleRate: sampleRate)
        try check(samples, minimumCount: 1)
        return samples.withUnsafeBufferPointer {
            frontEnd.spectrogram(of: $0, frameCount: MelFrontEnd.centeredFrameCount(sampleCount: samples.count))
        }
    }

    /// One window's embedding; see `embed(sampleWindows:sampleRate:)`.
    public func embed(partial samples: [Float], sampleRate: Int) throws -> [Float] {
        try embed(sampleWindows: [samples], sampleRate: sampleRate)[0]
    }

    /// Embeds each window of 16 kHz samples as one partial: volume-normalised on its own (if the
    /// config says so), then its count/160 mel frames (frame t centred on sample 160·t, so a 1.6 s
    /// window gives exactly the 160 frames resemblyzer would slice for those samples) go through the
    /// network. Windows of equal length are batched together. Windows need at least 400 samples.
    public func embed(sampleWindows: [[Float]], sampleRate: Int) throws -> [[Float]] {
        try check(sampleRate: sampleRate)
        let mels = try sampleWindows.map { window -> MelSpectrogram in
            try check(window, minimumCount: Self.minimumWindowSampleCount)
            var samples = window
            if config.normalizesVolume { VolumeNormalization.raise(&samples, toDBFS: config.targetLevelDBFS) }
            return samples.withUnsafeBufferPointer {
                frontEnd.spectrogram(of: $0, frameCount: samples.count / MelFrontEnd.hopLength)
            }
        }
        return try embed(melWindows: mels)
    }

    /// Embeds mel windows (usually 160 frames each), batching windows of equal length through the
    /// network `maximumBatchSize` at a time. Results are in the order given.
    public func embed(melWindows: [MelSpectrogram]) throws -> [[Float]] {
        for (index, mel) in melWindows.enumerated() {
            guard mel.frameCount >= 1, mel.values.count == mel.frameCount * MelSpectrogram.channelCount else {
                throw SpeakerEmbeddingError(.invalidInput, "mel window \(index) has \(mel.frameCount) frames and \(mel.values.count) values")
            }
            guard mel.values.allSatisfy(\.isFinite) else {
                throw SpeakerEmbeddingError(.invalidInput, "mel window \(index) holds a non-finite value")
            }
        }
        var results = [[Float]](repeating: [], count: melWindows.count)
        let byLength = Dictionary(grouping: melWindows.indices, by: { melWindows[$0].frameCount })
        for frameCount in byLength.keys.sorted() {
            let indices = byLength[frameCount]!
            for chunkStart in stride(from: 0, to: indices.count, by: config.maximumBatchSize) {
                let chunk = indices[chunkStart ..< min(indices.count, chunkStart + config.maximumBatchSize)]
                var packed: [Float] = []
                packed.reserveCapacity(chunk.count * frameCount * MelSpectrogram.channelCount)
                for index in chunk { packed.append(contentsOf: melWindows[index].values) }
                let embeddings = packed.withUnsafeBufferPointer {
                    network.embed(mels: $0, batch: chunk.count, frameCount: frameCount)
                }
                for (position, index) in chunk.enumerated() {
                    results[index] = Array(embeddings[position * Self.embeddingSize ..< (position + 1) * Self.embeddingSize])
                }
            }
        }
        return results
    }

    /// resemblyzer's `embed_utterance` on 16 kHz samples: volume normalisation of the whole
    /// utterance (if configured), partials at `partialsPerSecond` with `minimumCoverage`, zero-padding
    /// up to the last partial, one mel spectrogram for the whole padded audio, the mean of the
    /// partial embeddings renormalised.
    public func embedUtterance(samples: [Float], sampleRate: Int) throws -> UtteranceEmbedding {
        try check(sampleRate: sampleRate)
        try check(samples, minimumCount: 1)
        var audio = samples
        if config.normalizesVolume { VolumeNormalization.raise(&audio, toDBFS: config.targetLevelDBFS) }
        let starts = PartialWindows.frameStarts(
            sampleCount: audio.count, partialsPerSecond: config.partialsPerSecond, minimumCoverage: config.minimumCoverage)
        let hop = MelFrontEnd.hopLength, frames = PartialWindows.frameCount
        let paddedCount = (starts[starts.count - 1] + frames) * hop
        if paddedCount > audio.count { audio.append(contentsOf: repeatElement(0, count: paddedCount - audio.count)) }
        let mel = audio.withUnsafeBufferPointer {
            frontEnd.spectrogram(of: $0, frameCount: MelFrontEnd.centeredFrameCount(sampleCount: audio.count))
        }
        let partials = try embed(melWindows: starts.map { mel.frames($0 ..< $0 + frames) })
        var mean = [Float](repeating: 0, count: Self.embeddingSize)
        for partial in partials { for index in mean.indices { mean[index] += partial[index] / Float(partials.count) } }
        let norm = mean.reduce(0) { $0 + $1 * $1 }.squareRoot()
        if norm > 0 { mean = mean.map { $0 / norm } }
        return UtteranceEmbedding(
            embedding: mean, partialEmbeddings: partials,
            partialSampleRanges: starts.map { $0 * hop ..< ($0 + frames) * hop })
    }

    /// Cosine similarity of two embeddings (their dot product when both are unit length, as
    /// the encoder's are); 0 when either is all zeros.
    public static func cosineSimilarity(_ a: [Float], _ b: [Float]) -> Float {
        precondition(a.count == b.count, "embeddings of different sizes")
        var dot: Float = 0, normA: Float = 0, normB: Float = 0
        for index in a.indices {
            dot += a[index] * b[index]
            normA += a[index] * a[index]
            normB += b[index] * b[index]
        }
        let scale = (normA * normB).squareRoot()
        return scale > 0 ? dot / scale : 0
    }

    private func check(sampleRate: Int) throws {
        guard sampleRate == Self.sampleRate else {
            throw SpeakerEmbeddingError(
                .unsupportedSampleRate, "audio at \(sampleRate) Hz; the encoder was trained on \(Self.sampleRate) Hz (resample first)")
        }
    }

    private func check(_ samples: [Float], minimumCount: Int) throws {
        guard samples.count >= minimumCount else {
            throw SpeakerEmbeddingError(.invalidInput, "\(samples.count) samples; at least \(minimumCount) are needed")
        }
        guard samples.allSatisfy(\.isFinite) else {
            throw SpeakerEmbeddingError(.invalidInput, "the audio holds a non-finite sample")
        }
    }
}
