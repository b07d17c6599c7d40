import OverlapDiarization
import SpeakerSegmentation
import StreamingDiarization

/// Stand-ins for the two models, driven by the audio itself so the pipeline's logic can be checked
/// exactly: each sample's value is a bit mask of the voices talking then (1, 2, 4, 8: four voices;
/// 3 = voices 0 and 1 at once). The segmenter hears at most three voices per window, as pyannote's
/// model does, and numbers them in a different order in every window (local speakers are not global
/// ones); the embedder answers with a fixed direction per voice.
struct ScriptedSegmenter: WindowSegmenter {
    let frames = SegmentationFrames.pyannote3

    func activity(_ samples: UnsafeBufferPointer<Float>) throws -> LocalSpeakerActivity {
        let count = frames.frameCount(samples: samples.count)
        var masks = [Int](repeating: 0, count: count)
        for frame in 0 ..< count {
            let centre = frame * frames.shiftSamples + frames.receptiveFieldSamples / 2
            masks[frame] = Int(samples[min(samples.count - 1, centre)].rounded())
        }
        let voices = (0 ..< 4).filter { voice in masks.contains { $0 & (1 << voice) != 0 } }.prefix(3)
        // A different local numbering per window: rotate by the window's first sample value and length.
        let rotation = (samples.count / 270) % 3
        var probabilities = [Float](repeating: 0.02, count: count * 3)
        for (position, voice) in voices.enumerated() {
            let local = (position + rotation) % 3
            for frame in 0 ..< count where masks[frame] & (1 << voice) != 0 { probabilities[frame * 3 + local] = 0.97 }
        }
        return LocalSpeakerActivity(frameCount: count, speakerCount: 3, probabilities: probabilities)
    }
}

struct ScriptedEmbedder: SpeakerEmbedder {
    let dimension = 8

    /// The voices heard, mixed as they are in the audio: each voice's direction weighted by how much
    /// of the audio it is in (overlapped audio gives a mixture, as a real model's would).
    func embed(_ windows: [[Float]]) throws -> [[Float]] {
        windows.map { audio in
            var vector = [Float](repeating: 0.05, count: dimension)
            for sample in audio {
                let mask = Int(sample.rounded())
                for voice in 0 ..< 4 where mask & (1 << voice) != 0 { vector[voice] += 1 / Float(audio.count) }
            }
            vector[4 + audio.count % 4] += 0.02
            return vector
        }
    }
}

/// A meeting as (voice mask, seconds) pieces, rendered to samples.
func meeting(_ pieces: [(mask: Int, seconds: Double)]) -> [Float] {
    pieces.flatMap { [Float](repeating: Float($0.mask), count: Int($0.seconds * 16_000)) }
}
