import Foundation
import Testing
@testable import SpeechRecognition

@Suite struct RecognizerErrorTests {
    static func code(_ body: () throws -> Void) -> RecognizerError.Code? {
        do {
            try body()
            return nil
        } catch let error as RecognizerError {
            #expect(!error.message.isEmpty)
            return error.code
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func badAudioGivesSpecificCodes() throws {
        let recognizer = try PocketSphinxRecognizer(logger: Fixtures.logger)
        #expect(Self.code { _ = try recognizer.recognize(samples: [], sampleRate: 16_000) } == .emptyAudio)
        #expect(Self.code { _ = try recognizer.recognize(samples: [0.1, 0.2], sampleRate: 1) } == .unsupportedSampleRate)
        #expect(Self.code { _ = try recognizer.recognize(samples: [0.1, 0.2], sampleRate: 0) } == .unsupportedSampleRate)
        #expect(Self.code { _ = try recognizer.recognize(samples: [0.1, .nan], sampleRate: 16_000) } == .invalidSamples)
        // The recogniser is still usable after refusing input.
        let speech = try Fixtures.speak("hello world")
        #expect(try !recognizer.recognize(speech).isEmpty)
    }

    @Test func missingModelGivesModelNotFound() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-such-model-\(UUID().uuidString)").path
        #expect(Self.code { _ = try PocketSphinxRecognizer(config: RecognizerConfig(modelDirectory: missing), logger: Fixtures.logger) } == .modelNotFound)

        // A folder that exists but lacks the dictionary.
        let partial = FileManager.default.temporaryDirectory.appendingPathComponent("partial-model-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: partial.appendingPathComponent("en-us"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: partial) }
        FileManager.default.createFile(atPath: partial.appendingPathComponent("en-us.lm.bin").path, contents: Data())
        #expect(Self.code { _ = try PocketSphinxRecognizer(config: RecognizerConfig(modelDirectory: partial.path), logger: Fixtures.logger) } == .modelNotFound)
    }

    @Test func unreadableModelGivesDecoderInitFailed() throws {
        // All files present but empty: the paths check passes and ps_init itself fails.
        let fake = FileManager.default.temporaryDirectory.appendingPathComponent("empty-model-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: fake.appendingPathComponent("en-us"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: fake) }
        for name in ["en-us.lm.bin", "cmudict-en-us.dict"] {
            FileManager.default.createFile(atPath: fake.appendingPathComponent(name).path, contents: Data())
        }
        #expect(Self.code { _ = try PocketSphinxRecognizer(config: RecognizerConfig(modelDirectory: fake.path), logger: Fixtures.logger) } == .decoderInitFailed)
    }

    @Test func impossibleLengthsGiveInvalidConfig() {
        for config in [RecognizerConfig(maxUtteranceSeconds: 0), RecognizerConfig(blockSeconds: 0), RecognizerConfig(ditherSteps: -1)] {
            #expect(Self.code { _ = try PocketSphinxRecognizer(config: config, logger: Fixtures.logger) } == .invalidConfig)
        }
    }

    @Test func modelDirectoryComesFromTheEnvironmentWhenSet() {
        #expect(RecognizerConfig.modelDirectory(environment: [:]) == RecognizerConfig.debianModelDirectory)
        #expect(RecognizerConfig.modelDirectory(environment: [RecognizerConfig.modelDirectoryVariable: ""]) == RecognizerConfig.debianModelDirectory)
        #expect(RecognizerConfig.modelDirectory(environment: [RecognizerConfig.modelDirectoryVariable: "/opt/model"]) == "/opt/model")
    }
}
