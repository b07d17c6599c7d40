import Foundation
import Logging
import PluginHost
import SpeakerSyncAudio
import Testing
import TestSupport

/// speakerkit, dlopen'd, pushed through ABI revision 6's push_audio_many (as a provider worker does when
/// pushes queue up): every session's turns, push by push and after finalize, are those it gets when
/// pushed alone, on real meetings that start at different times and are chunked differently.
@Suite(.serialized) struct SpeakerKitBatchedPushTests {
    struct Meeting {
        var audio: [Float]
        var chunk: Int
        /// Pushes before this one's first (so that batches mix sessions in and out of speech).
        var delay: Int
    }

    static func meetings() throws -> [Meeting] {
        let files = ["sample/sample.wav", "ami-dev/dev00.wav", "ami-dev/dev01.wav", "ami-dev/trn03.wav"]
        return try files.enumerated().map { index, name in
            let file = try #require(TestData.file(name), "SPEAKERSYNC_TEST_DATA must point at the shared data")
            return Meeting(audio: try WAVFile.read(contentsOf: file).samples, chunk: [1_600, 1_600, 3_200, 800][index], delay: 3 * index)
        }
    }

    /// Every session's turns after each of its pushes, then after finalize; `batched` pushes each round
    /// of pushes through one push_audio_many.
    static func run(_ meetings: [Meeting], batched: Bool) throws -> [[[ProviderTurn]]] {
        let registry = try TestPlugins.freshRegistry("speakersync-speakerkit", configuration: ProviderConfiguration(sections: [:]),
                                                     logger: Logger(label: "batched") { _ in SwiftLogNoOpLogHandler() })
        // The live count floor off: it follows the overlap worker's windows as they finish, which is
        // timing (how far the low-priority worker got before each push), not batching. Everything else
        // a session gets must be the same to the last bit.
        let instances = try meetings.indices.map {
            try registry.makeInstance(providerID: "speakerkit", sessionID: "batched-\($0)", optionsJSON: #"{"live_solo_seconds": 0}"#)
        }
        var pulls = meetings.map { _ in [[ProviderTurn]]() }
        var positions = meetings.map { -$0.delay * $0.chunk }
        while zip(positions, meetings).contains(where: { $0 < $1.audio.count }) {
            var round: [(Int, [Float])] = []
            for index in meetings.indices {
                defer { positions[index] += meetings[index].chunk }
                let start = positions[index], end = min(meetings[index].audio.count, start + meetings[index].chunk)
                if start >= 0, end > start { round.append((index, Array(meetings[index].audio[start ..< end]))) }
            }
            if batched {
                let errors = try Self.withBuffers(round.map(\.1)) { buffers in
                    DiarizationInstance.push(many: zip(round, buffers).map { (instances[$0.0], $1) })
                }
                #expect(errors.allSatisfy { $0 == nil }, "\(errors)")
            } else {
                for (index, samples) in round { try instances[index].push(samples: samples) }
            }
            for (index, _) in round { pulls[index].append(try instances[index].pullTurns()) }
        }
        for index in meetings.indices { pulls[index].append(try instances[index].finalize()) }
        #expect(instances.allSatisfy { $0.batchKey != nil }, "speakerkit offers push_audio_many")
        return pulls
    }

    static func withBuffers<Result>(_ arrays: [[Float]], _ body: ([UnsafeBufferPointer<Float>]) throws -> Result) throws -> Result {
        func nest(_ index: Int, _ buffers: [UnsafeBufferPointer<Float>]) throws -> Result {
            guard index < arrays.count else { return try body(buffers) }
            return try arrays[index].withUnsafeBufferPointer { try nest(index + 1, buffers + [$0]) }
        }
        return try nest(0, [])
    }

    @Test func batchedPushesGiveEverySessionTheTurnsItGetsAlone() throws {
        let meetings = try Self.meetings()
        let alone = try Self.run(meetings, batched: false)
        let batched = try Self.run(meetings, batched: true)
        for index in meetings.indices {
            // (Finalize may revise nothing: a live re-clustering can have published the final labels already.)
            #expect(alone[index].contains { !$0.isEmpty }, "meeting \(index) got turns")
            // Equal to the last bit, confidences included: the batch changes who runs the VAD, not what it computes.
            #expect(batched[index] == alone[index], "meeting \(index): batched turns differ from alone")
        }
    }

    /// One instance's bad audio (a NaN) fails that instance alone, with the reason push_audio gives; the
    /// others in the same call go on, and an instance already finalized is refused as push would refuse it.
    @Test func aBadPushFailsItsInstanceAloneInTheBatch() throws {
        let registry = try TestPlugins.freshRegistry("speakersync-speakerkit", configuration: ProviderConfiguration(sections: [:]),
                                                     logger: Logger(label: "batched") { _ in SwiftLogNoOpLogHandler() })
        let instances = try (0 ..< 4).map { try registry.makeInstance(providerID: "speakerkit", sessionID: "bad-\($0)", optionsJSON: "") }
        _ = try instances[3].finalize()
        let audio = try Self.meetings()[0].audio
        var chunks = (0 ..< 4).map { _ in Array(audio[16_000 ..< 17_600]) }
        chunks[1][100] = .nan
        let errors = try Self.withBuffers(chunks) { buffers in DiarizationInstance.push(many: zip(instances, buffers).map { ($0, $1) }) }
        #expect(errors[0] == nil && errors[2] == nil)
        #expect(errors[1]?.code == .pushFailed && errors[1]?.message.contains("not finite") == true, "\(String(describing: errors[1]))")
        #expect(errors[3]?.code == .invalidState, "\(String(describing: errors[3]))")
        // The failed instance stays failed; the others take the next push as usual.
        #expect(throws: PluginError.self) { try instances[1].push(samples: chunks[0]) }
        try instances[0].push(samples: chunks[0])
        try instances[2].push(samples: chunks[0])
    }
}
