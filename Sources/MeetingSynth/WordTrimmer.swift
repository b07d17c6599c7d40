import Foundation
import SpeakerSyncAudio

/// Cuts the silence espeak-ng puts around a word, so the word's truth times are the span where its
/// audio actually is.
enum WordTrimmer {
    /// The range of `samples` from the first to the last sample above the threshold, or nil if none is.
    static func voicedRange(_ samples: [Float], floor: Float, relativeToPeak: Float) -> Range<Int>? {
        let peak = samples.reduce(Float(0)) { max($0, abs($1)) }
        let threshold = max(floor, peak * relativeToPeak)
        guard let first = samples.firstIndex(where: { abs($0) > threshold }),
              let last = samples.lastIndex(where: { abs($0) > threshold }) else { return nil }
        return first ..< last + 1
    }

    /// The trimmed word with 2 ms raised-cosine fades at both ends, so butting words do not click.
    static func trim(_ samples: [Float], floor: Float, relativeToPeak: Float, sampleRate: Int) -> [Float]? {
        guard let range = voicedRange(samples, floor: floor, relativeToPeak: relativeToPeak) else { return nil }
        var word = Array(samples[range])
        let fade = min(word.count / 2, sampleRate / 500)
        for i in 0 ..< fade {
            let gain = Float(0.5 - 0.5 * cos(Double.pi * Double(i + 1) / Double(fade + 1)))
            word[i] *= gain
            word[word.count - 1 - i] *= gain
        }
        return word
    }

    /// A synthesiser's WAV output for one word → 16 kHz, trimmed to the word; errors carry `failure`
    /// and name the word, the voice and the engine.
    static func word(fromWAV data: Data, word: String, voice: String, engine: String,
                     config: SynthConfig, failure: SynthError.Code) throws -> [Float] {
        let decoded: AudioBuffer
        do {
            decoded = try StreamingResampler.resample(WAVFile.decode(data))
        } catch {
            throw SynthError(failure, "\(engine) output for '\(word)' unreadable: \(error)")
        }
        guard let trimmed = trim(decoded.samples, floor: config.trimFloor, relativeToPeak: config.trimRelativeToPeak,
                                 sampleRate: decoded.sampleRate) else {
            throw SynthError(failure, "\(engine) produced silence for '\(word)' (\(voice))")
        }
        return trimmed
    }
}
