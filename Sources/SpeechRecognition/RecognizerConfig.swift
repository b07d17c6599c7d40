import Foundation

/// Where the PocketSphinx model lives and how long recordings are cut into utterances.
public struct RecognizerConfig: Sendable, Equatable {
    /// Environment variable that overrides `debianModelDirectory` in `.default`.
    public static let modelDirectoryVariable = "SPEAKERSYNC_POCKETSPHINX_MODEL"
    /// Where Debian's `pocketsphinx-en-us` package installs the US English model.
    public static let debianModelDirectory = "/usr/share/pocketsphinx/model/en-us"

    /// Folder holding the acoustic model folder, the language model and the dictionary.
    public var modelDirectory: String
    /// Acoustic model folder inside `modelDirectory` (`-hmm`).
    public var acousticModelName: String
    /// Binary trigram language model inside `modelDirectory` (`-lm`).
    public var languageModelName: String
    /// Pronunciation dictionary inside `modelDirectory` (`-dict`).
    public var dictionaryName: String
    /// Sample rate the acoustic model was trained on; other rates are resampled to it.
    public var modelSampleRate: Int
    /// Feature frames per second (`-frate`); word times are frame indices divided by this.
    public var framesPerSecond: Int
    /// Longest utterance handed to the decoder. A phone's recogniser finalises results after a pause or
    /// a few tens of seconds; shorter utterances also keep the search's memory bounded.
    public var maxUtteranceSeconds: Double
    /// A stretch at least this long whose energy stays below the pause threshold ends an utterance.
    public var minPauseSeconds: Double
    /// Frames quieter than the recording's noise floor (10th percentile of frame energy) plus this
    /// margin count as pause.
    public var pauseMarginDecibels: Double
    /// nil: each utterance goes to the decoder in one call, so cepstral mean normalisation uses the
    /// utterance's own mean (PocketSphinx's batch mode). A length: the utterance is fed in blocks of it,
    /// as a phone streams microphone audio, and normalisation uses a running estimate. Whole utterances
    /// are the default because they recognised synthesised speech better (see docs/words.md).
    public var blockSeconds: Double?
    /// Triangular dither, in 16-bit steps, added when converting samples to the decoder's 16-bit
    /// input: it hides quantisation and keeps digital silence (exact zeros, as in synthesised audio)
    /// from producing log-of-zero features that skew the normalisation. Seeded the same for every
    /// call, so a recording always gives the same words. 0 turns it off.
    public var ditherSteps: Double

    public init(modelDirectory: String = RecognizerConfig.debianModelDirectory,
                acousticModelName: String = "en-us", languageModelName: String = "en-us.lm.bin",
                dictionaryName: String = "cmudict-en-us.dict", modelSampleRate: Int = 16_000,
                framesPerSecond: Int = 100, maxUtteranceSeconds: Double = 30, minPauseSeconds: Double = 0.3,
                pauseMarginDecibels: Double = 12, blockSeconds: Double? = nil,
                ditherSteps: Double = 1) {
        self.modelDirectory = modelDirectory
        self.acousticModelName = acousticModelName
        self.languageModelName = languageModelName
        self.dictionaryName = dictionaryName
        self.modelSampleRate = modelSampleRate
        self.framesPerSecond = framesPerSecond
        self.maxUtteranceSeconds = maxUtteranceSeconds
        self.minPauseSeconds = minPauseSeconds
        self.pauseMarginDecibels = pauseMarginDecibels
        self.blockSeconds = blockSeconds
        self.ditherSteps = ditherSteps
    }

    /// The Debian model, or the folder named by `SPEAKERSYNC_POCKETSPHINX_MODEL`.
    public static let `default` = RecognizerConfig(
        modelDirectory: modelDirectory(environment: ProcessInfo.processInfo.environment))

    /// The model folder a process with `environment` uses.
    public static func modelDirectory(environment: [String: String]) -> String {
        if let path = environment[modelDirectoryVariable], !path.isEmpty { return path }
        return debianModelDirectory
    }

    var acousticModelPath: String { (modelDirectory as NSString).appendingPathComponent(acousticModelName) }
    var languageModelPath: String { (modelDirectory as NSString).appendingPathComponent(languageModelName) }
    var dictionaryPath: String { (modelDirectory as NSString).appendingPathComponent(dictionaryName) }

    /// Checks the model files exist, so a wrong path is reported as such rather than as a bare
    /// `ps_init` failure, and that the lengths make sense.
    func validate() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: modelDirectory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw RecognizerError(.modelNotFound, "PocketSphinx model directory \(modelDirectory) does not exist "
                + "(install pocketsphinx-en-us or set \(Self.modelDirectoryVariable))")
        }
        for path in [acousticModelPath, languageModelPath, dictionaryPath] where !FileManager.default.fileExists(atPath: path) {
            throw RecognizerError(.modelNotFound, "PocketSphinx model file \(path) does not exist")
        }
        guard modelSampleRate > 0, framesPerSecond > 0, maxUtteranceSeconds > 0, (blockSeconds ?? 1) > 0,
              minPauseSeconds >= 0, ditherSteps >= 0 else {
            throw RecognizerError(.invalidConfig, "sample rate, frame rate, utterance and block lengths must be positive, pause and dither not negative")
        }
    }

    /// The `cmd_ln` arguments: the model files, the frame rate, and the log silenced because a
    /// library must not write to the process' stderr (nor stdout, which carries the words JSON).
    /// PocketSphinx's own voice-activity detector is off so that every frame is decoded and frame
    /// indices stay on the audio timeline; pauses are found by `UtteranceSegmenter` instead.
    var decoderArguments: [String] {
        ["-hmm", acousticModelPath, "-lm", languageModelPath, "-dict", dictionaryPath,
         "-samprate", String(modelSampleRate), "-frate", String(framesPerSecond),
         "-remove_silence", "no", "-logfn", "/dev/null"]
    }
}
