import DiarizationModels
import Foundation
import Logging
import SpeakerEmbedding
import SpeakerSyncAudio
import StreamingDiarization
import Testing
import TestSupport

/// speakerkit's pipeline on the real models (silero VAD, GE2E) and real meetings: sessions whose
/// pushes share one encoder call label every word's time exactly as each session alone does.
@Suite struct BatchedSpeakerKitTests {
    static let logger = Logger(label: "batched-speakerkit-test")

    func makeDiarizer(_ encoder: SpeakerEncoder) throws -> StreamingDiarizer {
        try makeSpeakerKitDiarizer(embedder: GE2EEmbedder(encoder: encoder), logger: Self.logger)
    }

    /// Labels as a listener sees them: who, from when to when (to the millisecond). Confidences are
    /// left out: they are distances, and GEMMs of another shape may round them in the last bits.
    func labels(_ turns: [UInt64: DiarizerTurn]) -> [String] {
        turns.values.sorted { $0.id < $1.id }.map { String(format: "%d %.3f %.3f", $0.speaker, $0.startSeconds, $0.endSeconds) }
    }

    func apply(_ pulled: [DiarizerTurn], to state: inout [UInt64: DiarizerTurn]) {
        for turn in pulled { if turn.isRemoved { state[turn.id] = nil } else { state[turn.id] = turn } }
    }

    @Test func meetingsPushedTogetherGetTheLabelsEachGetsAlone() throws {
        let files = ["ami-dev/dev00.wav", "ami-dev/dev01.wav", "sample/sample.wav"].compactMap(TestData.file)
        try #require(files.count == 3, "the shared recordings (SPEAKERSYNC_TEST_DATA)")
        let meetings = try files.map { Array(try WAVFile.read(contentsOf: $0).samples.prefix(20 * 16_000)) }
        let encoder = try SpeakerEncoder(logger: Self.logger)
        let chunk = 1_600

        var alone: [[String]] = []
        var aloneLive: [[[String]]] = []
        for meeting in meetings {
            let diarizer = try makeDiarizer(encoder)
            var state: [UInt64: DiarizerTurn] = [:]
            var live: [[String]] = []
            for start in stride(from: 0, to: meeting.count, by: chunk) {
                try diarizer.push(Array(meeting[start ..< min(meeting.count, start + chunk)]))
                apply(diarizer.pullTurns(), to: &state)
                live.append(labels(state))
            }
            try diarizer.finalize()
            apply(diarizer.pullTurns(), to: &state)
            alone.append(labels(state))
            aloneLive.append(live)
        }

        let diarizers = try meetings.map { _ in try makeDiarizer(encoder) }
        var states = [[UInt64: DiarizerTurn]](repeating: [:], count: meetings.count)
        var live = [[[String]]](repeating: [], count: meetings.count)
        for start in stride(from: 0, to: meetings.map(\.count).max()!, by: chunk) {
            let due = meetings.indices.filter { start < meetings[$0].count }
            let errors = DiarizerBatch.push(due.map { (diarizers[$0], Array(meetings[$0][start ..< min(meetings[$0].count, start + chunk)])) },
                                            embedder: GE2EEmbedder(encoder: encoder))
            #expect(errors.allSatisfy { $0 == nil })
            for index in due {
                apply(diarizers[index].pullTurns(), to: &states[index])
                live[index].append(labels(states[index]))
            }
        }
        for index in diarizers.indices {
            try diarizers[index].finalize()
            apply(diarizers[index].pullTurns(), to: &states[index])
            #expect(live[index] == aloneLive[index], "live labels, push by push, of \(files[index].lastPathComponent)")
            #expect(labels(states[index]) == alone[index], "final labels of \(files[index].lastPathComponent)")
        }
        // Not a vacuous equality: the sessions found people and changes of speaker to agree on.
        #expect(states.contains { Set($0.values.map(\.speaker)).count >= 2 })
        #expect(states.allSatisfy { !$0.isEmpty })
    }
}
