import Foundation
import MeetingSynth
import Testing
@testable import SpeakerSyncEval

@Suite struct EvalCorpusTests {
    func folder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("eval-corpus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func syntheticSetsLoadWithTheirExactWordSpeakers() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try MeetingSet.write(MeetingSetConfig(speakerCount: 2, meetingCount: 1, turnCount: 4, seed: 5), to: directory)
        let recordings = try EvalCorpus.load(EvalCorpusSpec(
            audioPaths: [directory.path], rttmPaths: [directory.appendingPathComponent("reference.rttm").path],
            uemPaths: [directory.appendingPathComponent("reference.uem").path], wordsDirectory: directory.appendingPathComponent("words").path))
        let recording = try #require(recordings.first)
        #expect(recordings.count == 1 && recording.id == "synth2-00")
        let truth = try WordsFile.decode(Data(contentsOf: directory.appendingPathComponent("words/synth2-00.json"))).words
        #expect(recording.referenceWords.map(\.speaker) == truth.map(\.speaker))
        #expect(recording.words.count == truth.count)
        #expect(recording.uem?.count == 1)
        #expect(recording.deviceSegments.count == recording.reference.count)
    }

    @Test func missingInputsAreNamed() throws {
        let directory = try folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try MeetingSet.write(MeetingSetConfig(speakerCount: 2, meetingCount: 1, turnCount: 2, seed: 6), to: directory)
        let rttm = directory.appendingPathComponent("reference.rttm").path
        #expect { try EvalCorpus.load(EvalCorpusSpec(audioPaths: [directory.path], rttmPaths: [rttm], wordsDirectory: directory.path)) } throws: {
            ($0 as? EvalError)?.code == .missingWords
        }
        // Without a words folder: turns only.
        #expect(try EvalCorpus.load(EvalCorpusSpec(audioPaths: [directory.path], rttmPaths: [rttm])).first?.words.isEmpty == true)
        let other = directory.appendingPathComponent("other.rttm")
        try Data("SPEAKER elsewhere 1 0.0 1.0 <NA> <NA> a <NA> <NA>\n".utf8).write(to: other)
        #expect { try EvalCorpus.load(EvalCorpusSpec(audioPaths: [directory.path], rttmPaths: [other.path], wordsDirectory: directory.path)) } throws: {
            ($0 as? EvalError)?.code == .missingReference
        }
        #expect { try EvalCorpus.load(EvalCorpusSpec(audioPaths: ["/no/such/folder"], rttmPaths: [rttm])) } throws: {
            ($0 as? EvalError)?.code == .invalidInput
        }
    }
}
