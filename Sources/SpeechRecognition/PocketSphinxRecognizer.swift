import Logging
import SpeakerSyncAudio

/// On-machine speech recognition with CMU PocketSphinx: audio in, timed words out, like a phone's
/// on-device recogniser produces for SpeakerSync's clients.
///
/// Loading the model takes a moment, so create one recogniser and reuse it for many recordings.
/// Not thread-safe (the decoder holds the utterance being decoded); use one per thread.
public final class PocketSphinxRecognizer {
    public let config: RecognizerConfig
    private let decoder: SphinxDecoder
    private let logger: Logger

    /// Loads the acoustic model, language model and dictionary named by `config`.
    public init(config: RecognizerConfig = .default, logger: Logger) throws {
        try config.validate()
        self.config = config
        self.logger = logger
        decoder = try SphinxDecoder(configuration: SphinxConfiguration(arguments: config.decoderArguments))
        logger.debug("PocketSphinx model loaded", metadata: ["model": "\(config.modelDirectory)"])
    }

    /// Recognises mono audio at any rate the project's resampler takes (8–48 kHz).
    public func recognize(_ audio: AudioBuffer) throws -> [RecognizedWord] {
        try recognize(samples: audio.samples, sampleRate: audio.sampleRate)
    }

    /// Recognises mono samples (nominally −1…1). Returns words in time order with times in seconds from
    /// the first sample; silences, noises, fillers and sentence markers are left out.
    public func recognize(samples: [Float], sampleRate: Int) throws -> [RecognizedWord] {
        guard !samples.isEmpty else { throw RecognizerError(.emptyAudio, "no samples to recognise") }
        guard samples.allSatisfy(\.isFinite) else {
            throw RecognizerError(.invalidSamples, "audio contains NaN or infinite samples")
        }
        let audio = try resampled(samples, sampleRate: sampleRate)
        let pcm = PCM16Quantizer(ditherSteps: config.ditherSteps).quantize(audio)
        let rate = Double(config.modelSampleRate)
        let durationSeconds = Double(audio.count) / rate

        var words: [RecognizedWord] = []
        let utterances = UtteranceSegmenter(config: config).utterances(audio)
        for range in utterances {
            words += try decodeUtterance(pcm[range], startSeconds: Double(range.lowerBound) / rate,
                                         endSeconds: Double(range.upperBound) / rate)
        }
        logger.debug("recognised", metadata: [
            "words": "\(words.count)", "utterances": "\(utterances.count)", "seconds": "\(durationSeconds)",
        ])
        return words
    }

    /// Decodes one utterance of 16-bit samples at the model's rate that lies at `startSeconds` …
    /// `endSeconds` on the caller's timeline; returns its words on that timeline. Used for each
    /// utterance of a recording here and for each closed utterance of a stream by `StreamingRecognizer`.
    func decodeUtterance(_ pcm: ArraySlice<Int16>, startSeconds: Double, endSeconds: Double) throws -> [RecognizedWord] {
        let blockSize = config.blockSeconds.map { max(1, Int($0 * Double(config.modelSampleRate))) }
        let segments = try decoder.decodeUtterance(pcm, blockSize: blockSize)
        logger.trace("utterance decoded", metadata: [
            "startSeconds": "\(startSeconds)", "samples": "\(pcm.count)",
            "segments": "\(segments.map { "\($0.text)@\($0.startFrame)-\($0.endFrame)" }.joined(separator: " "))",
        ])
        var words: [RecognizedWord] = []
        for segment in segments {
            guard let text = Self.spokenWord(segment.text) else { continue }
            let start = startSeconds + Double(segment.startFrame) / Double(config.framesPerSecond)
            let end = startSeconds + Double(segment.endFrame + 1) / Double(config.framesPerSecond)
            let confidence = min(1, max(0, decoder.linearProbability(segment.logPosterior)))
            // The last frame can reach past the utterance by part of a frame; clamping keeps words of
            // neighbouring utterances from overlapping.
            words.append(RecognizedWord(text: text, startSeconds: min(start, endSeconds),
                                        endSeconds: min(end, endSeconds), confidence: confidence))
        }
        return words
    }

    /// Brings the audio to the model's rate with the project's resampler.
    private func resampled(_ samples: [Float], sampleRate: Int) throws -> [Float] {
        if sampleRate == config.modelSampleRate { return samples }
        do {
            let resamplerConfig = ResamplerConfig(outputRate: config.modelSampleRate)
            return try StreamingResampler.resample(AudioBuffer(samples: samples, sampleRate: sampleRate),
                                                   config: resamplerConfig).samples
        } catch let error as AudioError {
            throw RecognizerError(.unsupportedSampleRate,
                                  "cannot resample \(sampleRate) Hz audio to \(config.modelSampleRate) Hz: \(error.message)")
        }
    }

    /// The word as a device would report it, or nil for what is not speech: sentence markers `<s>`,
    /// `</s>`, silence `<sil>`, noise and filler entries such as `[NOISE]` or `++UH++`. Pronunciation
    /// variants (`read(2)`) lose their suffix.
    static func spokenWord(_ entry: String) -> String? {
        if entry.isEmpty || entry.hasPrefix("<") || entry.hasPrefix("[") || entry.hasPrefix("++") { return nil }
        var text = Substring(entry)
        if text.hasSuffix(")"), let open = text.lastIndex(of: "("), open > text.startIndex,
           text[text.index(after: open) ..< text.index(before: text.endIndex)].allSatisfy(\.isNumber) {
            text = text[..<open]
        }
        return text.isEmpty ? nil : String(text)
    }
}
