import ChildProcesses
import Foundation
import SpeakerEmbedding
import Testing

/// The Swift encoder against scripts/python/ge2e_reference.py, an independent float64 NumPy
/// implementation of the same front end and network, on the same real audio.
@Suite struct ReferenceAgreementTests {
    struct ReferenceOutput: Decodable {
        struct Utterance: Decodable {
            var embedding: [Float]
            var partials: [[Float]]
            var partial_sample_ranges: [[Int]]
        }
        var utterances: [Utterance]
        var windows: [[Float]]
    }

    /// Runs the reference with $SPEAKERSYNC_TEST_PYTHON (a Python with NumPy; scripts/test makes one).
    static func runReference(model: URL, utterances: [URL], windows: [URL]) throws -> ReferenceOutput {
        let python = ProcessInfo.processInfo.environment["SPEAKERSYNC_TEST_PYTHON"] ?? ""
        try #require(!python.isEmpty && FileManager.default.isExecutableFile(atPath: python),
                     "SPEAKERSYNC_TEST_PYTHON must name a Python with NumPy (scripts/test creates .venv-test and sets it); got '\(python)'")
        let arguments = [EncoderFixture.repositoryRoot.appendingPathComponent("scripts/python/ge2e_reference.py").path, "--model", model.path]
            + utterances.flatMap { ["--utterance", $0.path] } + windows.flatMap { ["--window", $0.path] }
        let done = try Subprocess.run(Subprocess.Configuration(executable: python, arguments: arguments))
        try #require(done.exit.succeeded, "ge2e_reference.py failed (\(done.exit)): \(done.standardErrorText)")
        return try JSONDecoder().decode(ReferenceOutput.self, from: done.standardOutput)
    }

    @Test func embeddingsMatchTheNumPyReference() throws {
        let encoder = try EncoderFixture.encoder()
        let sample = try EncoderFixture.recording("sample/sample.wav")
        let meeting = try EncoderFixture.recording("ami-dev/dev00.wav")
        let rate = SpeakerEncoder.sampleRate
        // Utterances of several lengths, including ones that are not whole hops, and whole files
        // (the AMI one is quiet, so volume normalisation raises it).
        let utterances: [[Float]] = [
            Array(sample[rate * 6 ..< rate * 8 + 37]),
            Array(sample[rate * 10 ..< rate * 15]),
            Array(sample[rate * 20 ..< rate * 20 + 9_999]),
            sample,
            meeting,
            Array(meeting[rate * 3 ..< rate * 3 + 24_000]),
        ]
        let windows: [[Float]] = (0 ..< 6).map { Array(meeting[rate * (4 * $0 + 1) ..< rate * (4 * $0 + 1) + SpeakerEncoder.partialSampleCount]) }
            + [Array(sample[rate * 12 ..< rate * 12 + 17_000 + 59]), Array(sample[rate * 25 ..< rate * 25 + SpeakerEncoder.partialSampleCount])]
        let folder = try EncoderFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let utteranceFiles = try utterances.enumerated().map { index, samples in
            let url = folder.appendingPathComponent("utterance-\(index).f32")
            try EncoderFixture.writeRawFloat32(samples, to: url)
            return url
        }
        let windowFiles = try windows.enumerated().map { index, samples in
            let url = folder.appendingPathComponent("window-\(index).f32")
            try EncoderFixture.writeRawFloat32(samples, to: url)
            return url
        }
        let reference = try Self.runReference(model: encoder.modelURL, utterances: utteranceFiles, windows: windowFiles)
        try #require(reference.utterances.count == utterances.count && reference.windows.count == windows.count)

        var lowest: Float = 1
        for (index, samples) in utterances.enumerated() {
            let ours = try encoder.embedUtterance(samples: samples, sampleRate: rate)
            let theirs = reference.utterances[index]
            #expect(ours.partialSampleRanges.map { [$0.lowerBound, $0.upperBound] } == theirs.partial_sample_ranges,
                    "utterance \(index): partial windows differ from resemblyzer's compute_partial_slices")
            let cosine = SpeakerEncoder.cosineSimilarity(ours.embedding, theirs.embedding)
            #expect(cosine >= 0.999, "utterance \(index) (\(samples.count) samples): cosine \(cosine)")
            lowest = min(lowest, cosine)
            for (partial, (a, b)) in zip(ours.partialEmbeddings, theirs.partials).enumerated() {
                let partialCosine = SpeakerEncoder.cosineSimilarity(a, b)
                #expect(partialCosine >= 0.999, "utterance \(index) partial \(partial): cosine \(partialCosine)")
                lowest = min(lowest, partialCosine)
            }
        }
        let ours = try encoder.embed(sampleWindows: windows, sampleRate: rate)
        for (index, (a, b)) in zip(ours, reference.windows).enumerated() {
            let cosine = SpeakerEncoder.cosineSimilarity(a, b)
            #expect(cosine >= 0.999, "window \(index): cosine \(cosine)")
            lowest = min(lowest, cosine)
        }
        print("GE2E reference agreement: lowest cosine \(lowest) over \(utterances.count) utterances (with partials) and \(windows.count) windows")
    }
}
