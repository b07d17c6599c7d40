import Foundation
import Testing
import TestSupport
import VoiceActivity

/// Many streams' windows through one model call per step (`SileroBatch`) give each stream the segments
/// it gets alone, and a prefetch that does not match the next accept is discarded, not used.
struct SileroBatchTests {
    @Test func batchedStreamsGetTheSegmentsTheyGetAlone() throws {
        let names = ["sample", "dev00", "dev01", "trn02", "trn05"]
        let recordings = try names.map { $0 == "sample" ? try Recordings.sample() : try Recordings.ami($0) }
        let alone = try recordings.map { Recordings.stream($0.samples, through: try Recordings.detector(), chunk: 1_600).segments }

        let detectors = try recordings.map { _ in try Recordings.detector() }
        var segments = recordings.map { _ in [SpeechSegment]() }
        // Streams start at different offsets so that batches mix streams in and out of speech, and
        // chunk sizes differ so that steps complete at different points in each push.
        let chunks = [1_600, 1_600, 800, 3_200, 1_000]
        var positions = recordings.indices.map { -$0 * 7_000 }
        while zip(positions, recordings).contains(where: { $0 < $1.samples.count }) {
            var pushes: [(Int, [Float])] = []
            for index in recordings.indices {
                let start = max(0, positions[index]), end = min(recordings[index].samples.count, positions[index] + chunks[index])
                positions[index] += chunks[index]
                if end > start { pushes.append((index, Array(recordings[index].samples[start ..< end]))) }
            }
            let buffers = pushes.map { UnsafeMutableBufferPointer<Float>.allocate(capacity: $0.1.count) }
            defer { buffers.forEach { $0.deallocate() } }
            for (buffer, push) in zip(buffers, pushes) { _ = buffer.initialize(from: push.1) }
            SileroBatch.prefetch(zip(pushes, buffers).map { (detectors[$0.0], UnsafeBufferPointer($1)) })
            for (push, buffer) in zip(pushes, buffers) {
                detectors[push.0].accept(samples: UnsafeBufferPointer(buffer))
                segments[push.0] += detectors[push.0].popSegments()
            }
        }
        for index in recordings.indices {
            detectors[index].flush()
            segments[index] += detectors[index].popSegments()
            #expect(!segments[index].isEmpty)
            #expect(segments[index] == alone[index], "\(names[index]): batched segments differ from the stream alone")
            // Every window but the first (classified when the second step arrives) came from a batch.
            let counts = detectors[index].windowCounts
            #expect(counts.runAlone == 0 && counts.computedAhead > 800, "\(names[index]): \(counts)")
        }
    }

    @Test func aPrefetchForOtherSamplesIsNotUsed() throws {
        let recording = try Recordings.ami("dev00")
        let alone = Recordings.stream(recording.samples, through: try Recordings.detector(), chunk: 1_600).segments
        let detector = try Recordings.detector()
        var segments: [SpeechSegment] = []
        var index = 0
        while index < recording.samples.count {
            let chunk = Array(recording.samples[index ..< min(recording.samples.count, index + 1_600)])
            // Computed ahead for silence: must be thrown away when the real chunk arrives.
            let wrong = [Float](repeating: 0, count: chunk.count)
            wrong.withUnsafeBufferPointer { SileroBatch.prefetch([(detector, $0)]) }
            detector.accept(samples: chunk)
            segments += detector.popSegments()
            index += 1_600
        }
        detector.flush()
        segments += detector.popSegments()
        #expect(segments == alone)
        #expect(detector.windowCounts.computedAhead == 0)
    }

    /// A diarizer gathers pushes into blocks before its VAD sees them: audio prefetched push by push and
    /// accepted in other pieces is still used, and checked sample by sample.
    @Test func audioPrefetchedInPushesAndAcceptedInBlocksIsUsed() throws {
        let recording = try Recordings.ami("dev01")
        let alone = Recordings.stream(recording.samples, through: try Recordings.detector(), chunk: 1_600).segments
        let detector = try Recordings.detector()
        var segments: [SpeechSegment] = []
        var block: [Float] = []
        for start in stride(from: 0, to: recording.samples.count, by: 1_600) {
            let push = Array(recording.samples[start ..< min(recording.samples.count, start + 1_600)])
            push.withUnsafeBufferPointer { SileroBatch.prefetch([(detector, $0)]) }
            block += push
            if block.count >= 8_000 {
                detector.accept(samples: block)
                segments += detector.popSegments()
                block.removeAll()
            }
        }
        detector.accept(samples: block)
        detector.flush()
        segments += detector.popSegments()
        #expect(segments == alone)
        #expect(detector.windowCounts.runAlone == 0)
    }
}
