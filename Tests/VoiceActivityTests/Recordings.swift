import Foundation
import Logging
import SpeakerSyncAudio
import SpeakerSyncClient
import Testing
import TestSupport
import VoiceActivity

/// The shared recordings and how the tests stream them through a detector. Private to this target.
enum Recordings {
    struct Recording {
        var name: String
        var samples: [Float]
        var reference: [SpeechSegment]
    }

    static let amiNames = ["dev00", "dev01"] + (1...9).map { "trn0\($0)" }

    static func sample() throws -> Recording {
        try load(wav: "sample/sample.wav", rttm: "sample/sample.rttm", name: "sample")
    }

    static func ami(_ name: String) throws -> Recording {
        try load(wav: "ami-dev/\(name).wav", rttm: "ami-dev/reference.rttm", name: name)
    }

    private static func load(wav: String, rttm: String, name: String) throws -> Recording {
        let wavURL = try #require(TestData.file(wav), "\(wav) missing: set SPEAKERSYNC_TEST_DATA to the shared data folder")
        let rttmURL = try #require(TestData.file(rttm), "\(rttm) missing: set SPEAKERSYNC_TEST_DATA")
        let audio = try WAVFile.read(contentsOf: wavURL)
        try #require(audio.sampleRate == 16_000, "\(wav) is \(audio.sampleRate) Hz")
        let reference = try DeviceInput.readRTTM(path: rttmURL.path, recording: name)
            .map { SpeechSegment(startSeconds: $0.startSeconds, endSeconds: $0.endSeconds) }
        return Recording(name: name, samples: audio.samples, reference: reference)
    }

    static let quietLogger = Logger(label: "vad-test") { _ in SwiftLogNoOpLogHandler() }

    /// A detector on the vendored library and model (scripts/setup installs them; scripts/test runs it).
    static func detector(_ config: VADConfig = .default) throws -> SileroVoiceActivityDetector {
        do {
            return try SileroVoiceActivityDetector(config: config, logger: quietLogger)
        } catch {
            Issue.record("no detector (\(error)); run scripts/setup to install vendor/")
            throw error
        }
    }

    /// What a streaming consumer sees while feeding `samples` in `chunk`-sized pieces.
    struct Stream {
        var segments: [SpeechSegment] = []
        /// Received audio (seconds) when each segment came out of `popSegments`, flush included.
        var poppedAtSeconds: [Double] = []
        /// `ongoingSpeechStartSeconds` each time `isSpeechActive` turned on, with the audio received then.
        var onsets: [(startSeconds: Double, receivedSeconds: Double)] = []
        /// `receivedSeconds - analyzedSeconds` after each chunk.
        var lags: [Double] = []
    }

    static func stream(_ samples: [Float], through detector: SileroVoiceActivityDetector, chunk: Int) -> Stream {
        var result = Stream()
        var index = 0
        while index < samples.count {
            let end = min(index + chunk, samples.count)
            let wasActive = detector.isSpeechActive
            detector.accept(samples: Array(samples[index..<end]))
            if !wasActive, let start = detector.ongoingSpeechStartSeconds {
                result.onsets.append((start, detector.receivedSeconds))
            }
            result.lags.append(detector.receivedSeconds - detector.analyzedSeconds)
            let closed = detector.popSegments()
            result.segments += closed
            result.poppedAtSeconds += closed.map { _ in detector.receivedSeconds }
            index = end
        }
        detector.flush()
        let last = detector.popSegments()
        result.segments += last
        result.poppedAtSeconds += last.map { _ in detector.receivedSeconds }
        return result
    }
}
