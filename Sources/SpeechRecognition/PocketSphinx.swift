import CPocketSphinx
import Foundation

/// The one file of raw PocketSphinx and sphinxbase calls. Everything else goes through these helpers,
/// which turn the library's negative return codes and NULL pointers into thrown `RecognizerError`s,
/// so ownership and error handling live in one place.
enum PocketSphinx {
    /// `cmd_ln_t *`
    typealias Config = OpaquePointer
    /// `ps_decoder_t *`
    typealias Decoder = OpaquePointer

    /// One entry of a hypothesis' word segmentation. Frames are inclusive, counted from the start of
    /// the utterance; `logPosterior` is in the decoder's log base (see `linearProbability`).
    struct Segment {
        var text: String
        var startFrame: Int
        var endFrame: Int
        var logPosterior: Int32
    }

    // MARK: Configuration

    /// Parses `-name value` pairs against PocketSphinx's own argument definitions.
    ///
    /// `cmd_ln_parse_r` keeps the argument-name pointers as hash keys instead of copying them, so the
    /// strings must outlive the config: they are duplicated here and handed back for the owner to free
    /// after `cmd_ln_free_r` (`withCString` would leave dangling keys). On failure they are freed here.
    static func parseConfig(_ arguments: [String]) throws -> (config: Config, strings: [UnsafeMutablePointer<CChar>]) {
        var argv: [UnsafeMutablePointer<CChar>?] = (["speakersync"] + arguments).map { strdup($0) }
        let config = argv.withUnsafeMutableBufferPointer { buffer in
            cmd_ln_parse_r(nil, ps_args(), Int32(buffer.count), buffer.baseAddress, 1)
        }
        guard let config else {
            argv.forEach { free($0) }
            throw RecognizerError(.invalidConfig, "PocketSphinx rejected the arguments \(arguments.joined(separator: " "))")
        }
        return (config, argv.compactMap { $0 })
    }

    /// Drops this reference; the decoder holds its own (`ps_init` retains the config).
    static func freeConfig(_ config: Config) { cmd_ln_free_r(config) }

    // MARK: Decoder

    /// Loads the models named in `config`. `ps_init` frees its partial state itself when it fails.
    static func initDecoder(_ config: Config) throws -> Decoder {
        guard let decoder = ps_init(config) else {
            throw RecognizerError(.decoderInitFailed, "ps_init failed to load the acoustic model, language model or dictionary")
        }
        return decoder
    }

    static func freeDecoder(_ decoder: Decoder) { ps_free(decoder) }

    /// Starts a new stream, then an utterance in it. Frame numbers count from the start of the stream,
    /// and when fed in blocks they run on across utterances of one stream (not quite by the samples
    /// fed), so every utterance gets its own stream: its frames then count from its first sample.
    static func startUtterance(_ decoder: Decoder) throws {
        guard ps_start_stream(decoder) >= 0 else {
            throw RecognizerError(.decodeFailed, "ps_start_stream failed")
        }
        guard ps_start_utt(decoder) >= 0 else {
            throw RecognizerError(.decodeFailed, "ps_start_utt failed")
        }
    }

    /// Feeds 16-bit samples at the model's rate. With `fullUtterance` the samples are the whole
    /// utterance, so cepstral mean normalisation uses its own mean instead of a running estimate.
    static func processRaw(_ decoder: Decoder, _ samples: UnsafeBufferPointer<Int16>, fullUtterance: Bool) throws {
        guard let base = samples.baseAddress, samples.count > 0 else { return }
        guard ps_process_raw(decoder, base, samples.count, 0, fullUtterance ? 1 : 0) >= 0 else {
            throw RecognizerError(.decodeFailed, "ps_process_raw failed on a block of \(samples.count) samples")
        }
    }

    static func endUtterance(_ decoder: Decoder) throws {
        guard ps_end_utt(decoder) >= 0 else {
            throw RecognizerError(.decodeFailed, "ps_end_utt failed")
        }
    }

    /// The best hypothesis' segmentation after `ps_end_utt`, including silences and fillers.
    /// Empty when the search produced no hypothesis (e.g. silence only).
    static func segments(_ decoder: Decoder) -> [Segment] {
        var result: [Segment] = []
        var iterator = ps_seg_iter(decoder)
        while let segment = iterator {
            var startFrame: Int32 = 0
            var endFrame: Int32 = 0
            ps_seg_frames(segment, &startFrame, &endFrame)
            var acoustic: Int32 = 0, language: Int32 = 0, backoff: Int32 = 0
            let posterior = ps_seg_prob(segment, &acoustic, &language, &backoff)
            let text = ps_seg_word(segment).map { String(cString: $0) } ?? ""
            result.append(Segment(text: text, startFrame: Int(startFrame), endFrame: Int(endFrame), logPosterior: posterior))
            iterator = ps_seg_next(segment)  // frees the iterator at the end
        }
        return result
    }

    /// Converts a log posterior in the decoder's base to a probability.
    static func linearProbability(_ decoder: Decoder, _ logValue: Int32) -> Double {
        guard let logmath = ps_get_logmath(decoder) else { return 0 }
        return logmath_exp(logmath, logValue)
    }
}
