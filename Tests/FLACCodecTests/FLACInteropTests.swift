import ChildProcesses
import FLACCodec
import Foundation
import SpeakerSyncAudio
import Testing

/// The streams are ordinary FLAC: another libFLAC client (SoX, which writes its STREAMINFO by seeking
/// back, MD5 included) reads ours, and ours reads its.
@Suite struct FLACInteropTests {
    static let samples = FLACTestSignals.tone(hertz: 300, seconds: 1.5, sampleRate: 16_000)
        + FLACTestSignals.fullScaleSquare(count: 1_000, halfPeriod: 10)

    /// Runs sox with `arguments` in a fresh folder holding `files`; returns the folder, or nil (and an
    /// issue) when sox is missing.
    static func sox(_ arguments: [String], files: [String: Data]) throws -> URL? {
        guard let sox = ["/usr/bin/sox", "/usr/local/bin/sox"].first(where: FileManager.default.isExecutableFile) else {
            Issue.record("sox is missing: install it (scripts/setup does)")
            return nil
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("flac-interop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, data) in files { try data.write(to: folder.appendingPathComponent(name)) }
        var configuration = Subprocess.Configuration(executable: sox, arguments: arguments)
        configuration.workingDirectory = folder.path
        let done = try Subprocess.run(configuration)
        try #require(done.exit.succeeded, "sox \(arguments.joined(separator: " ")): \(done.exit) \(done.standardErrorText)")
        return folder
    }

    @Test func soxReadsOurStream() throws {
        let stream = try FLACEncoder.encode(Self.samples, sampleRate: 16_000)
        guard let folder = try Self.sox(["in.flac", "-t", "raw", "-e", "signed", "-b", "16", "-L", "out.raw"],
                                        files: ["in.flac": Data(stream)]) else { return }
        defer { try? FileManager.default.removeItem(at: folder) }
        let raw = try Data(contentsOf: folder.appendingPathComponent("out.raw"))
        let decoded = stride(from: 0, to: raw.count - 1, by: 2).map {
            Int16(bitPattern: UInt16(raw[raw.startIndex + $0]) | UInt16(raw[raw.startIndex + $0 + 1]) << 8)
        }
        #expect(decoded == Self.samples)
    }

    @Test func weReadSoxsStream() throws {
        // Float x/32768 is exact and WAVWriter's 16-bit quantizer multiplies by 32768, so the WAV holds
        // exactly these samples.
        let wav = WAVWriter.encode(AudioBuffer(samples: Self.samples.map { Float($0) / 32_768 }, sampleRate: 16_000))
        guard let folder = try Self.sox(["in.wav", "out.flac"], files: ["in.wav": wav]) else { return }
        defer { try? FileManager.default.removeItem(at: folder) }
        let stream = [UInt8](try Data(contentsOf: folder.appendingPathComponent("out.flac")))
        let decoded = try FLACDecoder.decode(stream)
        #expect(decoded.sampleRate == 16_000)
        #expect(decoded.samples == Self.samples)
    }
}
