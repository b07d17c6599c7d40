import Foundation
import SpeakerSegmentation
import SpeakerSyncAudio
import Testing
import TestSupport

/// pyannote segmentation-3.0 through the onnxruntime shim, the real model (vendor/models, from
/// scripts/setup) on real speech: the shared two-speaker recording and its reference turns.
@Suite struct PyannoteSegmentationTests {
    static func sample() throws -> (samples: [Float], turns: [(speaker: String, start: Double, end: Double)]) {
        let audio = try #require(TestData.file("sample/sample.wav"), "SPEAKERSYNC_TEST_DATA must point at the shared data")
        let rttm = try #require(TestData.file("sample/sample.rttm"))
        let buffer = try WAVFile.read(contentsOf: audio)
        #expect(buffer.sampleRate == 16_000)
        let turns = try String(contentsOf: rttm, encoding: .utf8).split(separator: "\n").compactMap { line -> (String, Double, Double)? in
            let fields = line.split(separator: " ")
            guard fields.count >= 8, fields[0] == "SPEAKER", let start = Double(fields[3]), let duration = Double(fields[4]) else { return nil }
            return (String(fields[7]), start, start + duration)
        }
        return (buffer.samples, turns)
    }

    @Test func framesFollowTheModelsGeometry() throws {
        let model = try PyannoteSegmentation()
        for seconds in [1.0, 5.0, 10.0] {
            let samples = [Float](repeating: 0, count: Int(seconds * 16_000))
            let activity = try model.activity(samples)
            #expect(activity.frameCount == model.frames.frameCount(samples: samples.count))
            #expect(activity.speakerCount == 3)
            // Silence: nobody talks.
            #expect(activity.probabilities.allSatisfy { $0 < 0.5 })
        }
        #expect(SegmentationFrames.pyannote3.frameCount(samples: 160_000) == 589)
        #expect(SegmentationFrames.pyannote3.frameCount(samples: 80_000) == 293)
    }

    /// Where the reference says someone talks, a local speaker is active, and not elsewhere; a window
    /// holding both people's turns has two local speakers.
    @Test func speechAndSpeakersAgreeWithTheReference() throws {
        let (samples, turns) = try Self.sample()
        let model = try PyannoteSegmentation()
        var agreeing = 0, frames = 0, twoSpeakerWindows = 0
        for windowStart in stride(from: 0, to: samples.count - 160_000 + 1, by: 80_000) {
            let activity = try model.activity(Array(samples[windowStart ..< windowStart + 160_000]))
            var spoken = [Double](repeating: 0, count: 3)
            for frame in 0 ..< activity.frameCount {
                let time = Double(windowStart) / 16_000 + model.frames.centreSeconds(frame: frame)
                let reference = turns.contains { $0.start <= time && time < $0.end }
                let heard = (0 ..< 3).contains { activity.probability(frame: frame, speaker: $0) >= 0.5 }
                if reference == heard { agreeing += 1 }
                frames += 1
                for speaker in 0 ..< 3 where activity.probability(frame: frame, speaker: speaker) >= 0.5 { spoken[speaker] += model.frames.frameSeconds }
            }
            let window = Double(windowStart) / 16_000 ... Double(windowStart) / 16_000 + 10
            let people = Set(turns.filter { window.contains($0.start) && $0.end - $0.start > 1 }.map(\.speaker))
            if people.count >= 2, spoken.filter({ $0 >= 0.5 }).count >= 2 { twoSpeakerWindows += 1 }
        }
        #expect(frames > 1_000)
        #expect(Double(agreeing) / Double(frames) >= 0.85, "speech/non-speech agreement \(Double(agreeing) / Double(frames))")
        #expect(twoSpeakerWindows >= 2)
    }

    @Test func badAudioAndMissingFilesAreRefusedByCode() throws {
        let model = try PyannoteSegmentation()
        let short = [Float](repeating: 0, count: 500)
        #expect(throws: SpeakerSegmentationError.self) { try model.activity(short) }
        do {
            _ = try model.activity(short)
        } catch {
            #expect(error.code == .invalidAudio)
        }
        var noisy = [Float](repeating: 0, count: 16_000)
        noisy[100] = .nan
        do {
            _ = try model.activity(noisy)
            Issue.record("a NaN sample was accepted")
        } catch {
            #expect(error.code == .invalidAudio)
        }
        do {
            _ = try PyannoteSegmentation(modelPath: "/nonexistent/segmentation.onnx")
            Issue.record("a missing model was accepted")
        } catch {
            #expect(error.code == .modelNotFound)
        }
        // A file that is not a model: onnxruntime refuses it, and the message says so.
        let notAModel = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-model-\(getpid()).onnx")
        try Data("not onnx".utf8).write(to: notAModel)
        defer { try? FileManager.default.removeItem(at: notAModel) }
        do {
            _ = try PyannoteSegmentation(modelPath: notAModel.path)
            Issue.record("a text file was accepted as a model")
        } catch {
            #expect(error.code == .invalidModel)
        }
    }

    /// The powerset's classes add up per speaker: overlap classes count for both.
    @Test func powersetBecomesPerSpeakerProbabilities() {
        let log = { (p: Float) in Float(Foundation.log(Double(p))) }
        // Frame 0: silence certain. Frame 1: speakers 0+1 at 0.6, speaker 2 alone at 0.4.
        let values: [Float] = [log(1), log(1e-9), log(1e-9), log(1e-9), log(1e-9), log(1e-9), log(1e-9),
                               log(1e-9), log(1e-9), log(1e-9), log(0.4), log(0.6), log(1e-9), log(1e-9)]
        let activity = LocalSpeakerActivity.fromPowerset(logProbabilities: values, frameCount: 2, powerset: PyannoteSegmentation.powerset, speakerCount: 3)
        #expect(activity.probability(frame: 0, speaker: 0) < 1e-6)
        #expect(abs(activity.probability(frame: 1, speaker: 0) - 0.6) < 1e-5)
        #expect(abs(activity.probability(frame: 1, speaker: 1) - 0.6) < 1e-5)
        #expect(abs(activity.probability(frame: 1, speaker: 2) - 0.4) < 1e-5)
    }
}
