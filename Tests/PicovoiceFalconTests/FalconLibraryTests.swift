import Foundation
import Testing
import TestSupport
@testable import PicovoiceFalcon

/// PicovoiceFalcon against the test double of libpv_falcon (same symbols, behaviour chosen by the
/// AccessKey) and, for what this machine can check, the real vendored library: statuses become
/// errors with Picovoice's message stack, and the key never appears in one.
@Suite struct FalconLibraryTests {
    /// Tones: `first` Hz for `seconds`, then `second` Hz, at 16 kHz.
    static func tones(_ parts: [(hertz: Double, seconds: Double)]) -> [Float] {
        parts.flatMap { part in
            (0 ..< Int(part.seconds * 16_000)).map { part.hertz == 0 ? 0 : Float(0.3 * sin(2 * Double.pi * part.hertz * Double($0) / 16_000)) }
        }
    }

    @Test func theDoubleLoadsAndDiarizesTwoTones() throws {
        let library = try FalconLibrary.load(path: try FalconDouble.library().path)
        #expect(library.version == "2.0.1-test-double")
        #expect(library.sampleRate == 16_000)
        let engine = try FalconEngine(library: library, accessKey: "double-ok", modelPath: try FalconDouble.model().path, device: "cpu:1")
        let audio = Self.tones([(500, 2), (0, 1), (150, 2)])
        let segments = try audio.withUnsafeBufferPointer { try engine.process($0) }
        #expect(segments == [
            FalconSegment(startSeconds: 0, endSeconds: 2, speakerTag: 0),
            FalconSegment(startSeconds: 3, endSeconds: 5, speakerTag: 1),
        ])
    }

    @Test func aFailedActivationCarriesPicovoicesStackWithTheKeyRedacted() throws {
        let library = try FalconLibrary.load(path: try FalconDouble.library().path)
        let key = "double-activation-fails-7f3a9c"
        let model = try FalconDouble.model().path
        do {
            _ = try FalconEngine(library: library, accessKey: key, modelPath: model, device: "cpu:1")
            Issue.record("init succeeded")
        } catch {
            #expect(error.code == .activationError)
            #expect(error.code.isActivation)
            #expect(error.message == "pv_falcon_init failed: ACTIVATION_ERROR")
            #expect(error.stack == ["Picovoice Error.", "Failed to activate AccessKey `[redacted]`: the activation server could not be reached"])
            #expect(!error.description.contains(key))
        }
    }

    @Test func aFailingProcessIsAnErrorWithItsStack() throws {
        let library = try FalconLibrary.load(path: try FalconDouble.library().path)
        let engine = try FalconEngine(library: library, accessKey: "double-process-fails-0", modelPath: try FalconDouble.model().path, device: "cpu:1")
        let audio = Self.tones([(500, 1)])
        #expect {
            _ = try audio.withUnsafeBufferPointer { try engine.process($0) }
        } throws: { error in
            (error as? FalconError)?.code == .runtimeError && (error as? FalconError)?.stack.last == "Falcon test double: process failed as its AccessKey asked"
        }
    }

    @Test func aMissingLibraryOrOneWithoutFalconsSymbolsIsNamed() throws {
        #expect { _ = try FalconLibrary.load(path: "/nonexistent/libpv_falcon.so") } throws: { ($0 as? FalconError)?.code == .libraryNotFound }
        // Any other shared library: the plugin ABI's faulty test plugin has none of pv_*.
        let folder = try TestPlugins.folder(copying: [], faulty: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect { _ = try FalconLibrary.load(path: folder.appendingPathComponent("libfaulty.so").path) } throws: { error in
            (error as? FalconError)?.code == .symbolMissing && (error as? FalconError)?.message.contains("pv_falcon_init") == true
        }
    }

    @Test func theConfigComesFromTheSectionThenTheEnvironmentAndNeverShowsTheKey() throws {
        let environment = ["PICOVOICE_ACCESS_KEY": "env-key-123", "SPEAKERSYNC_FALCON_LIBRARY": "/env/libpv_falcon.so"]
        let fromEnvironment = try FalconConfig.parse(section: nil, environment: environment)
        #expect(fromEnvironment.accessKey == "env-key-123")
        #expect(fromEnvironment.libraryPath == "/env/libpv_falcon.so")
        #expect(fromEnvironment.modelPath.hasSuffix("vendor/picovoice/models/falcon_params.pv"))
        #expect(fromEnvironment.device == "cpu:1")
        #expect(!fromEnvironment.description.contains("env-key-123"))
        let fromFile = try FalconConfig.parse(section: #"{"access_key": "file-key", "device": "cpu:2", "engines": 3}"#, environment: environment)
        #expect(fromFile.accessKey == "file-key")
        #expect(fromFile.device == "cpu:2")
        #expect(fromFile.engines == 3)
        for (section, expected) in [
            (#"{"accesskey": "x"}"#, "unknown setting 'accesskey'"),
            (#"{"access_key": 5}"#, "falcon setting 'access_key' must be a non-empty string"),
            (#"{"engines": 0}"#, "'engines' must be a whole number from 1 to 64"),
        ] {
            #expect { _ = try FalconConfig.parse(section: section, environment: [:]) } throws: { error in
                (error as? FalconError)?.code == .invalidConfig && (error as? FalconError)?.message.contains(expected) == true
            }
        }
        #expect(try FalconConfig.parse(section: nil, environment: [:]).accessKey == nil)
    }

    /// The real libpv_falcon.so from PyPI pvfalcon 2.0.1: on a machine without Picovoice's servers any
    /// key fails; what must hold is that it fails as an error with Picovoice's own messages, key redacted.
    @Test func theRealLibraryRefusesAKeyItCannotUseWithItsOwnMessage() throws {
        let vendored = try FalconDouble.vendored()
        let library = try FalconLibrary.load(path: vendored.library.path)
        #expect(library.version.hasPrefix("2."))
        #expect(library.sampleRate == 16_000)
        let key = "c3BlYWtlcnN5bmMtdGVzdC1rZXktbm90LXJlYWw="
        do {
            _ = try FalconEngine(library: library, accessKey: key, modelPath: vendored.model.path, device: "cpu:1")
            Issue.record("a made-up AccessKey was accepted")
        } catch {
            #expect(error.code.isActivation, "\(error.code)")
            #expect(!error.stack.isEmpty)
            #expect(!error.description.contains(key))
            #expect(error.description.contains("AccessKey"), "\(error.description)")
        }
    }
}
