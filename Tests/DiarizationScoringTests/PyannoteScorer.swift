import ChildProcesses
import Foundation

/// pyannote.metrics run in a real Python process (scripts/python/pyannote_score.py), the reference the
/// field uses, so the Swift metrics are checked against it rather than against numbers copied from a run.
struct PyannoteScorer {
    struct Case: Encodable {
        var uri: String
        var reference: String
        var hypothesis: String
        var uem: String?
        var collar: Double
        var skip_overlap: Bool
    }

    struct Result: Decodable {
        var total: Double
        var correct: Double
        var missed: Double
        var false_alarm: Double
        var confusion: Double
        var der: Double
        var jer: Double
        var speaker_count_error: Double
    }

    private struct Input: Encodable { var cases: [Case] }
    private struct Output: Decodable {
        var pyannote_metrics: String
        var results: [Result]
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let python: URL
    let script: URL

    /// The interpreter from SPEAKERSYNC_TEST_PYTHON (scripts/test creates `.venv-test` and sets it).
    init() throws {
        guard let path = ProcessInfo.processInfo.environment["SPEAKERSYNC_TEST_PYTHON"], !path.isEmpty else {
            throw Failure(description: """
                SPEAKERSYNC_TEST_PYTHON is not set: the pyannote agreement test needs a Python with pyannote.metrics. \
                Run scripts/test (it creates .venv-test with pyannote.metrics and sets the variable), or set it to \
                such an interpreter yourself.
                """)
        }
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw Failure(description: "SPEAKERSYNC_TEST_PYTHON=\(path) is not an executable file; run scripts/test to create .venv-test.")
        }
        python = URL(fileURLWithPath: path)
        // Tests/DiarizationScoringTests/PyannoteScorer.swift → repository root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        script = root.appendingPathComponent("scripts/python/pyannote_score.py")
        guard FileManager.default.fileExists(atPath: script.path) else {
            throw Failure(description: "missing \(script.path)")
        }
    }

    /// Scores every case in one process; returns the pyannote.metrics version and one result per case.
    func score(_ cases: [Case]) throws -> (version: String, results: [Result]) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pyannote-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let inputURL = folder.appendingPathComponent("cases.json")
        let outputURL = folder.appendingPathComponent("results.json")
        let errorURL = folder.appendingPathComponent("stderr.txt")
        try JSONEncoder().encode(Input(cases: cases)).write(to: inputURL)
        try Data().write(to: outputURL)
        try Data().write(to: errorURL)

        // Files rather than pipes: the input is larger than a pipe buffer and the process is waited on.
        let input = try FileHandle(forReadingFrom: inputURL)
        let outputFile = try FileHandle(forWritingTo: outputURL)
        let errors = try FileHandle(forWritingTo: errorURL)
        var configuration = Subprocess.Configuration(executable: python.path, arguments: [script.path])
        configuration.standardInput = .descriptor(input.fileDescriptor)
        configuration.standardOutput = .descriptor(outputFile.fileDescriptor)
        configuration.standardError = .descriptor(errors.fileDescriptor)
        let exit = try Subprocess(configuration).waitUntilExit()
        for handle in [input, outputFile, errors] { try? handle.close() }
        let errorText = String(decoding: (try? Data(contentsOf: errorURL)) ?? Data(), as: UTF8.self)
        guard exit.succeeded else {
            throw Failure(description: """
                \(python.path) \(script.path) ended with \(exit) \
                (is pyannote.metrics installed? scripts/test installs it into .venv-test):
                \(errorText.suffix(2000))
                """)
        }
        let output = try JSONDecoder().decode(Output.self, from: Data(contentsOf: outputURL))
        guard output.results.count == cases.count else {
            throw Failure(description: "pyannote returned \(output.results.count) results for \(cases.count) cases")
        }
        return (output.pyannote_metrics, output.results)
    }
}
