import Foundation
import Testing
import TestSupport
import VoiceActivity

/// The silero model run here on onnxruntime (`VADEngine.onnxRuntime`) against sherpa-onnx's own
/// detector on the same recordings: the segments, their timing and the live speech state must be
/// sherpa-onnx's, window for window, since `SileroSpeechGate` mirrors its rules.
struct SileroOnnxEngineTests {
    static func engines(_ config: VADConfig = .default) throws -> (onnx: SileroVoiceActivityDetector, sherpa: SileroVoiceActivityDetector) {
        var onnx = config, sherpa = config
        onnx.engine = .onnxRuntime
        sherpa.engine = .sherpaOnnx
        return (try Recordings.detector(onnx), try Recordings.detector(sherpa))
    }

    static func expectSame(_ lhs: Recordings.Stream, _ rhs: Recordings.Stream, _ name: String) {
        #expect(lhs.segments == rhs.segments, "\(name): segments differ")
        #expect(lhs.poppedAtSeconds == rhs.poppedAtSeconds, "\(name): segments came out at other times")
        #expect(lhs.onsets.map(\.startSeconds) == rhs.onsets.map(\.startSeconds), "\(name): live onsets differ")
        #expect(lhs.lags == rhs.lags, "\(name): analysed position differs")
    }

    @Test(arguments: ["sample"] + Recordings.amiNames)
    func givesSherpaOnnxsSegmentsOnRealMeetings(_ name: String) throws {
        let recording = name == "sample" ? try Recordings.sample() : try Recordings.ami(name)
        let (onnx, sherpa) = try Self.engines()
        let ours = Recordings.stream(recording.samples, through: onnx, chunk: 1_600)
        let theirs = Recordings.stream(recording.samples, through: sherpa, chunk: 1_600)
        // (trn01 is near-silent to silero at these settings: both find nothing there.)
        #expect(!theirs.segments.isEmpty || name == "trn01")
        Self.expectSame(ours, theirs, name)
    }

    /// A long monologue passes the maximum speech duration (sherpa-onnx's stricter threshold then) and
    /// odd chunk sizes cut the model's steps anywhere.
    @Test func longSpeechAndOddChunksToo() throws {
        var config = VADConfig.default
        config.maxSpeechDurationSeconds = 2
        config.minSilenceDurationSeconds = 0.3
        let recording = try Recordings.sample()
        let (onnx, sherpa) = try Self.engines(config)
        for chunk in [333, 4_097] {
            let ours = Recordings.stream(recording.samples, through: onnx, chunk: chunk)
            let theirs = Recordings.stream(recording.samples, through: sherpa, chunk: chunk)
            // Segments beyond the maximum: the stricter rule was in play.
            #expect(theirs.segments.contains { $0.endSeconds - $0.startSeconds > config.maxSpeechDurationSeconds })
            Self.expectSame(ours, theirs, "sample in chunks of \(chunk)")
            onnx.reset()
            sherpa.reset()
        }
    }
}
