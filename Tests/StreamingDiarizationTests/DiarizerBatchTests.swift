import Foundation
import Logging
import SpeakerManager
import Synchronization
import Testing
@testable import StreamingDiarization

/// The tone embedder, counting its calls and the windows each carried.
final class CountingToneEmbedder: SpeakerEmbedder {
    private let calls = Mutex<[Int]>([])
    var dimension: Int { 256 }
    var windowsPerCall: [Int] { calls.withLock { $0 } }

    func embed(_ windows: [[Float]]) throws -> [[Float]] {
        calls.withLock { $0.append(windows.count) }
        return try ToneEmbedder().embed(windows)
    }
}

@Suite struct DiarizerBatchTests {
    static let logger = Logger(label: "diarizer-batch-test")

    func makeDiarizer(_ embedder: any SpeakerEmbedder) throws -> StreamingDiarizer {
        var managerConfig = SpeakerManagerConfig.default
        managerConfig.speakerThreshold = 0.3
        managerConfig.minEmbeddingUpdateDurationSeconds = 1
        return StreamingDiarizer(config: .default, detector: LoudnessDetector(), embedder: embedder,
                                 speakers: try SpeakerManager(config: managerConfig, logger: Self.logger), logger: Self.logger)
    }

    /// Three different meetings: who talks when differs, so the sessions' windows fall due at different pushes.
    let meetings: [[Float]] = [
        silence(0.5) + tone(0, seconds: 3) + tone(1, seconds: 3) + silence(1) + tone(0, seconds: 2) + silence(1),
        silence(1.2) + tone(2, seconds: 2) + silence(0.7) + tone(0, seconds: 4) + tone(2, seconds: 1.5) + silence(1),
        tone(1, seconds: 1.5) + tone(2, seconds: 2.5) + silence(2) + tone(1, seconds: 3) + silence(0.5),
    ]

    /// Every pull of every session, in order: what the host would have been sent, push by push.
    typealias Transcript = [[DiarizerTurn]]

    func alone(_ meeting: [Float], chunk: Int) throws -> Transcript {
        let diarizer = try makeDiarizer(ToneEmbedder())
        var pulls: Transcript = []
        for start in stride(from: 0, to: meeting.count, by: chunk) {
            try diarizer.push(Array(meeting[start ..< min(meeting.count, start + chunk)]))
            pulls.append(diarizer.pullTurns())
        }
        try diarizer.finalize()
        pulls.append(diarizer.pullTurns())
        return pulls
    }

    @Test func sessionsPushedTogetherPublishExactlyWhatEachPublishesAlone() throws {
        let chunk = 1_600
        let embedder = CountingToneEmbedder()
        let diarizers = try meetings.map { _ in try makeDiarizer(embedder) }
        var pulls = [Transcript](repeating: [], count: meetings.count)
        let longest = meetings.map(\.count).max()!
        for start in stride(from: 0, to: longest, by: chunk) {
            let due = meetings.indices.filter { start < meetings[$0].count }
            let errors = DiarizerBatch.push(due.map { (diarizers[$0], Array(meetings[$0][start ..< min(meetings[$0].count, start + chunk)])) },
                                            embedder: embedder)
            #expect(errors.allSatisfy { $0 == nil })
            for index in due { pulls[index].append(diarizers[index].pullTurns()) }
        }
        for index in diarizers.indices {
            try diarizers[index].finalize()
            pulls[index].append(diarizers[index].pullTurns())
        }
        for (index, meeting) in meetings.enumerated() {
            let expected = try alone(meeting, chunk: chunk)
            #expect(pulls[index] == expected, "session \(index)")
            #expect(expected.joined().contains { !$0.isRemoved }, "session \(index) published turns")
        }
        // The point of it: some encoder call carried more than one session's windows.
        let alone = try meetings.map { meeting -> Int in
            let counter = CountingToneEmbedder()
            let diarizer = try makeDiarizer(counter)
            for start in stride(from: 0, to: meeting.count, by: chunk) { try diarizer.push(Array(meeting[start ..< min(meeting.count, start + chunk)])) }
            return counter.windowsPerCall.count
        }
        let batchedLiveCalls = embedder.windowsPerCall.count - meetings.count   // minus one finalize call each
        #expect(batchedLiveCalls < alone.reduce(0, +))
    }

    @Test func aSessionThatFailsDoesNotStopTheOthers() throws {
        let embedder = CountingToneEmbedder()
        let finished = try makeDiarizer(embedder)
        try finished.finalize()
        let working = try makeDiarizer(embedder)
        let meeting = meetings[0]
        var published = 0
        for start in stride(from: 0, to: meeting.count, by: 1_600) {
            let piece = Array(meeting[start ..< min(meeting.count, start + 1_600)])
            let errors = DiarizerBatch.push([(finished, piece), (working, piece)], embedder: embedder)
            #expect((errors[0] as? DiarizerError)?.code == .finalized)
            #expect(errors[1] == nil)
            published += working.pullTurns().count
        }
        #expect(published > 0)
    }

    @Test func anEncoderFailureFailsOnlyTheSessionsWithWindowsInTheCall() throws {
        struct BrokenEncoder: SpeakerEmbedder {
            var dimension: Int { 256 }
            func embed(_ windows: [[Float]]) throws -> [[Float]] { throw DiarizerError(.embeddingFailed, "scripted") }
        }
        let speaking = try makeDiarizer(BrokenEncoder())
        let silent = try makeDiarizer(BrokenEncoder())
        var speakingFailed = false
        for start in stride(from: 0, to: 16_000 * 4, by: 1_600) {
            let errors = DiarizerBatch.push([(speaking, Array(tone(0, seconds: 4)[start ..< start + 1_600])), (silent, silence(0.1))],
                                            embedder: BrokenEncoder())
            if let error = errors[0] as? DiarizerError {
                #expect(error.code == .embeddingFailed)
                speakingFailed = true
                break
            }
            #expect(errors[1] == nil)
        }
        #expect(speakingFailed)
    }
}
