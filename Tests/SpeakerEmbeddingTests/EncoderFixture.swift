import Foundation
import Logging
import SpeakerEmbedding
import SpeakerSyncAudio
import Testing
import TestSupport

/// What the tests share: one encoder loaded from the ge2e.bin scripts/setup produced, the shared
/// recordings, and the speaker turns of their reference RTTMs.
enum EncoderFixture {
    static let loaded: Result<SpeakerEncoder, any Error> = Result {
        var logger = Logger(label: "test.speaker-embedding")
        logger.logLevel = .warning
        return try SpeakerEncoder(logger: logger)
    }

    /// The encoder, or a test failure that says how to get the model.
    static func encoder() throws -> SpeakerEncoder {
        switch loaded {
        case .success(let encoder): return encoder
        case .failure(let error):
            Issue.record("cannot load the GE2E model (run scripts/setup to produce vendor/models/ge2e.bin): \(error)")
            throw error
        }
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// A shared recording as 16 kHz samples.
    static func recording(_ relativePath: String) throws -> [Float] {
        let url = try #require(TestData.file(relativePath), "shared data \(relativePath) not found (set SPEAKERSYNC_TEST_DATA)")
        let audio = try WAVFile.read(contentsOf: url)
        try #require(audio.sampleRate == SpeakerEncoder.sampleRate, "\(relativePath) is not 16 kHz")
        return audio.samples
    }

    struct Turn {
        var recording: String
        var speaker: String
        var startSeconds: Double
        var endSeconds: Double
    }

    static func turns(rttm relativePath: String) throws -> [Turn] {
        let url = try #require(TestData.file(relativePath), "shared data \(relativePath) not found")
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 8, fields[0] == "SPEAKER", let start = Double(fields[3]), let duration = Double(fields[4]) else { return nil }
            return Turn(recording: String(fields[1]), speaker: String(fields[7]), startSeconds: start, endSeconds: start + duration)
        }
    }

    /// Stretches where exactly one speaker talks, per recording, as turns.
    static func soloRegions(_ turns: [Turn]) -> [Turn] {
        var regions: [Turn] = []
        for recording in Set(turns.map(\.recording)).sorted() {
            let own = turns.filter { $0.recording == recording }
            let boundaries = Set(own.flatMap { [$0.startSeconds, $0.endSeconds] }).sorted()
            for (start, end) in zip(boundaries, boundaries.dropFirst()) {
                let active = Set(own.filter { $0.startSeconds < end && $0.endSeconds > start }.map(\.speaker))
                guard active.count == 1, let speaker = active.first else { continue }
                if let last = regions.last, last.recording == recording, last.speaker == speaker, last.endSeconds == start {
                    regions[regions.count - 1].endSeconds = end
                } else {
                    regions.append(Turn(recording: recording, speaker: speaker, startSeconds: start, endSeconds: end))
                }
            }
        }
        return regions
    }

    /// Writes samples as raw little-endian float32, the reference script's input format.
    static func writeRawFloat32(_ samples: [Float], to url: URL) throws {
        try PCMDecoding.encode(samples, encoding: .f32le).write(to: url)
    }

    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("speakersync-ge2e-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}
