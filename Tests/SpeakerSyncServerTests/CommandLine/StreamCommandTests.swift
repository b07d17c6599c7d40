import Foundation
import SpeakerSyncClient
import Testing
import TestSupport
@testable import SpeakerSyncServer

/// `speakersync stream` as a user meets it: what it says about a wrong words file, its help, the
/// conversation id it prints and `--live`.
@Suite(.serialized) struct StreamCommandTests {
    typealias TestServer = EndToEndTests.TestServer

    /// The words file is read before any connection: these fail the same with no server listening.
    @Test func aWrongWordsFileEndsStreamNamingTheFileAndTheProblem() async throws {
        let files = try ClientContractEndToEndTests.recording()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        let cases: [(name: String, contents: String?, problem: String)] = [
            ("missing.json", nil, "no such file"),
            ("garbled.json", "{\"words\": [", "not JSON ("),
            ("list.json", "[]", #"expected {"words": [{"text", "start", "end", "confidence"?}]}, found an array"#),
            ("untimed.json", #"{"words":[{"text":"hello"}]}"#, #"word 0 has no "start" number (seconds)"#),
        ]
        for (name, contents, problem) in cases {
            let path = files.folder.appendingPathComponent(name).path
            if let contents { try contents.write(toFile: path, atomically: true, encoding: .utf8) }
            let result = try await CommandLineRun.run(["stream", files.wav, "--words", path, "--url", "http://127.0.0.1:1"], timeoutSeconds: 60)
            #expect(result.status == 1, "\(name)")
            #expect(result.standardError.contains("Error: words file \(path): \(problem)"), "\(name): \(result.standardError)")
            #expect(!result.standardError.contains("NSCocoaErrorDomain"), "\(name): \(result.standardError)")
        }
    }

    /// A words file with no words is streamed (the audio and turns are still worth storing), with a warning.
    @Test func anEmptyWordsFileIsAWarningAndTheStreamGoesOn() async throws {
        let server = try TestServer()
        let files = try ClientContractEndToEndTests.recording()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        let empty = files.folder.appendingPathComponent("empty.json").path
        try #"{"words": []}"#.write(toFile: empty, atomically: true, encoding: .utf8)
        let result = try await CommandLineRun.run(["stream", files.wav, "--words", empty, "--provider", "device", "--url", server.http],
                                                  environment: ["SPEAKERSYNC_TOKEN": server.adminKey], timeoutSeconds: 120)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("warning: words file \(empty) holds no words; the conversation is stored without a transcript"),
                "\(result.standardError)")
    }

    @Test func theHelpNamesSpeakerkitAsTheDefaultProvider() async throws {
        let result = try await CommandLineRun.run(["stream", "--help"], timeoutSeconds: 60)
        let help = result.standardOutput.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("Diarization provider (default: device with --segments/--rttm, else speakerkit, also the server's own default"), "\(help)")
        #expect(!help.contains("else energy"))
    }

    /// Text mode names the conversation first (so it can be looked up while the stream runs); `--live`
    /// off a terminal prints each utterance as it changes, ending with the final labels.
    @Test func textModeNamesTheConversationAndLivePrintsEachChange() async throws {
        let server = try TestServer()
        let files = try ClientContractEndToEndTests.recording()
        defer { try? FileManager.default.removeItem(at: files.folder) }
        let segments = files.folder.appendingPathComponent("segments.json").path
        try #"{"segments":[{"speaker":"A","start":0,"end":1}]}"#.write(toFile: segments, atomically: true, encoding: .utf8)
        let result = try await CommandLineRun.run(["stream", files.wav, "--words", files.words, "--segments", segments, "--live", "--url", server.http],
                                                  environment: ["SPEAKERSYNC_TOKEN": server.adminKey], timeoutSeconds: 120)
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardError.split(separator: "\n").map(String.init)
        let id = try #require(lines.first?.hasPrefix("conversation ") == true ? String(lines[0].dropFirst("conversation ".count)) : nil,
                              "\(result.standardError)")
        #expect(UUID(uuidString: id) != nil)
        #expect(try server.json("/v1/conversations/\(id)").body["device_id"] as? String == "speakersync-cli")
        let changes = lines.dropFirst()
        #expect(!changes.isEmpty && changes.allSatisfy { $0.range(of: #"^u\d+ \d+\.\d-\d+\.\d s .+: "#, options: .regularExpression) != nil },
                "\(result.standardError)")
        #expect(changes.last?.hasSuffix("Speaker 1: hello") == true, "\(result.standardError)")
        #expect(result.standardOutput == "Speaker 1: hello\n")

        // JSON mode carries the id in the JSON; nothing but the live lines (none here) goes to standard error.
        let json = try await CommandLineRun.run(["stream", files.wav, "--words", files.words, "--segments", segments, "--format", "json",
                                                 "--url", server.http], environment: ["SPEAKERSYNC_TOKEN": server.adminKey], timeoutSeconds: 120)
        #expect(json.status == 0 && json.standardError.isEmpty, "\(json.standardError)")
    }

    /// `--asr server`: while the server recognises, lines on standard error say how far the words it sent
    /// back reach into the recording, growing, never past the recording; the transcript still goes to
    /// standard output alone.
    @Test func serverRecognitionShowsProgress() async throws {
        let server = try TestServer()
        let wav = try DeepgramEndToEndTests.meetingWAV()
        defer { try? FileManager.default.removeItem(at: wav) }
        let result = try await CommandLineRun.run(["stream", wav.path, "--asr", "server", "--speed", "2", "--url", server.http],
                                                  environment: ["SPEAKERSYNC_TOKEN": server.adminKey], timeoutSeconds: 300)
        #expect(result.status == 0, "\(result.standardError)")
        let pattern = #"^stream: words recognised up to ([0-9.]+) s of ([0-9.]+) s \(([0-9]+) words\)$"#
        let progress = result.standardError.split(separator: "\n").map(String.init).compactMap { line -> (Double, Double, Int)? in
            guard let match = line.firstMatch(of: try! Regex(pattern)), match.count == 4,
                  let reach = Double(match[1].substring ?? ""), let total = Double(match[2].substring ?? ""),
                  let words = Int(match[3].substring ?? "") else { return nil }
            return (reach, total, words)
        }
        #expect(!progress.isEmpty, "\(result.standardError)")
        #expect(progress.contains { $0.2 > 0 }, "\(result.standardError)")
        #expect(progress.allSatisfy { $0.0 <= $0.1 })
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.0 <= $1.0 })
        #expect(!result.standardOutput.contains("stream:"))
        #expect(result.standardOutput.contains("Speaker "))
    }
}
