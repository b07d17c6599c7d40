import Foundation
import SpeakerSyncAudio

/// Speech recognition of audio that is still arriving: chunks at the stream's rate go in, and each
/// utterance comes out decoded as soon as a pause (or the length limit) closes it, with its words on
/// the stream's timeline. `finish()` decodes the utterance still open.
///
/// The audio is resampled with the project's resampler, quantised with the batch recogniser's dither
/// sequence and cut by `StreamingUtteranceSegmenter`, all chunk-independent: the words do not depend on
/// how the audio was chunked, and differ from `PocketSphinxRecognizer.recognize` on the whole recording
/// only where the stream's cuts do (see `StreamingRecognizerConfig`). Utterances are decoded with a
/// recogniser borrowed from `pool` for each one, so many streams share a few loaded models.
///
/// Not thread-safe: one stream, one thread (or serial queue) at a time.
public final class StreamingRecognizer {
    /// Rate of the samples passed to `process`.
    public let sampleRate: Int
    /// Where the stream's first sample lies on the caller's timeline; added to every time returned.
    public let offsetSeconds: Double
    public let config: StreamingRecognizerConfig
    private let pool: RecognizerPool
    private let modelRate: Int
    private var resampler: StreamingResampler?
    private var quantizer: PCM16Quantizer
    private var segmenter: StreamingUtteranceSegmenter
    /// 16-bit samples of the open utterance onwards; `pcm[0]` is model-rate sample `pcmStart`.
    private var pcm: [Int16] = []
    private var pcmStart = 0
    private var nextIndex = 0
    private var finished = false

    public init(pool: RecognizerPool, sampleRate: Int, offsetSeconds: Double = 0, config: StreamingRecognizerConfig = .default) throws {
        let recognizerConfig = pool.config
        self.pool = pool
        self.sampleRate = sampleRate
        self.offsetSeconds = offsetSeconds
        self.config = config
        modelRate = recognizerConfig.modelSampleRate
        if sampleRate != modelRate {
            do {
                resampler = try StreamingResampler(inputRate: sampleRate, config: ResamplerConfig(outputRate: modelRate))
            } catch let error as AudioError {
                throw RecognizerError(.unsupportedSampleRate, "cannot resample \(sampleRate) Hz audio to \(modelRate) Hz: \(error.message)")
            }
        }
        quantizer = PCM16Quantizer(ditherSteps: recognizerConfig.ditherSteps)
        segmenter = StreamingUtteranceSegmenter(config: recognizerConfig, streaming: config)
    }

    /// Seconds of audio received so far (at the stream's rate).
    public private(set) var receivedSeconds = 0.0
    /// Seconds of audio held for the open utterance, not yet decoded.
    public var openSeconds: Double { Double(pcm.count) / Double(modelRate) }

    /// Feeds the next chunk (mono, nominally −1…1); returns the utterances it closed, decoded, in order.
    public func process(_ samples: [Float]) throws -> [RecognizedUtterance] {
        guard !finished else { throw RecognizerError(.streamFinished, "the stream was finished; start a new one") }
        guard samples.allSatisfy(\.isFinite) else {
            throw RecognizerError(.invalidSamples, "audio contains NaN or infinite samples")
        }
        receivedSeconds += Double(samples.count) / Double(sampleRate)
        return take(resampler?.process(samples) ?? samples)
    }

    /// Ends the stream: the resampler's tail, then the open utterance, decoded. Later calls throw
    /// `stream_finished`.
    public func finish() throws -> [RecognizedUtterance] {
        guard !finished else { throw RecognizerError(.streamFinished, "the stream was finished already") }
        finished = true
        let tail = resampler?.flush() ?? []
        var utterances = take(tail)
        if let last = segmenter.finish() { utterances += decode([last]) }
        return utterances
    }

    /// Adds model-rate samples to the open utterance and decodes what they closed.
    private func take(_ samples: [Float]) -> [RecognizedUtterance] {
        guard !samples.isEmpty else { return [] }
        pcm += quantizer.quantizeNext(samples)
        return decode(segmenter.process(samples))
    }

    private func decode(_ ranges: [Range<Int>]) -> [RecognizedUtterance] {
        ranges.map { range in
            let slice = pcm[(range.lowerBound - pcmStart) ..< (range.upperBound - pcmStart)]
            let rate = Double(modelRate)
            let start = offsetSeconds + Double(range.lowerBound) / rate
            let end = offsetSeconds + Double(range.upperBound) / rate
            var utterance = RecognizedUtterance(index: nextIndex, startSeconds: start, endSeconds: end, words: [])
            nextIndex += 1
            do {
                utterance.words = try pool.withRecognizer { try $0.decodeUtterance(slice, startSeconds: start, endSeconds: end) }
            } catch let error as RecognizerError {
                utterance.failure = error
            } catch {
                utterance.failure = RecognizerError(.decodeFailed, "\(error)")
            }
            pcm.removeFirst(range.upperBound - pcmStart)
            pcmStart = range.upperBound
            return utterance
        }
    }
}
