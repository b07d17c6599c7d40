import Foundation
import Testing
@testable import SpeakerSyncKit

@Suite struct AudioRetentionTests {
    static func pcm(_ count: Int, value: UInt8) -> [UInt8] { [UInt8](repeating: value, count: count * 2) }

    @Test func resendStartsExactlyAtTheServersPointForPCM() {
        var audio = AudioRetention(bytesPerSample: 2, capacitySamples: 10_000)
        audio.append(Self.pcm(100, value: 1), sampleCount: 100)
        audio.append(Self.pcm(100, value: 2), sampleCount: 100)
        let (start, frames) = audio.frames(from: 50)
        #expect(start == 50)
        #expect(frames.map(\.sampleCount) == [50, 100])
        #expect(frames[0].bytes.count == 100 && frames[0].bytes.allSatisfy { $0 == 1 })
        #expect(audio.frames(from: 150).frames.map(\.sampleCount) == [50])
        #expect(audio.frames(from: 200).frames.isEmpty)
    }

    @Test func packetsAreResentWholeFromTheOneHoldingThePoint() {
        var audio = AudioRetention(bytesPerSample: nil, capacitySamples: 10_000)
        for index in 0..<5 { audio.append([UInt8(index), 0xfc], sampleCount: 320) }
        let (start, frames) = audio.frames(from: 700)
        #expect(start == 640) // the packet covering 640..<960 holds sample 700
        #expect(frames.map { $0.bytes[0] } == [2, 3, 4])
    }

    @Test func theRetentionIsBoundedAndCountsWhatItDropped() {
        var audio = AudioRetention(bytesPerSample: 2, capacitySamples: 250)
        for _ in 0..<10 { audio.append(Self.pcm(100, value: 7), sampleCount: 100) }
        #expect(audio.totalSamples == 1000)
        // At most the capacity, and less only by part of one frame.
        #expect(audio.retainedSamples <= 250 && audio.retainedSamples > 150)
        #expect(audio.droppedSamples == 1000 - audio.retainedSamples)
        // Asking for dropped audio returns what is left: the caller sees the gap by the start.
        let (start, _) = audio.frames(from: 0)
        #expect(start == audio.firstRetainedSample && start > 0)
    }

    @Test func storedAudioIsReleased() {
        var audio = AudioRetention(bytesPerSample: 2, capacitySamples: 10_000)
        for _ in 0..<4 { audio.append(Self.pcm(100, value: 1), sampleCount: 100) }
        audio.release(before: 250)
        #expect(audio.firstRetainedSample == 200) // the frame holding sample 250 stays
        #expect(audio.frames(from: 250).frames.first?.sampleCount == 50)
    }
}

@Suite struct AudioSpoolTests {
    @Test func spooledAudioReadsBackAndItsFilesGoWhenReleased() throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("kit-spool-\(UUID().uuidString)")
        let spool = try AudioSpool(directory: folder, samplesPerFile: 300)
        defer { spool.removeAll() }
        var audio = AudioRetention(bytesPerSample: 2, capacitySamples: 10_000, spool: spool)
        for index in 0..<10 { audio.append([UInt8](repeating: UInt8(index), count: 200), sampleCount: 100) }
        #expect(spool.diskBytes == 2000)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).count
        #expect(files == 4) // 300 samples per file: frames 0-2, 3-5, 6-8, 9
        let (start, frames) = audio.frames(from: 450)
        #expect(start == 450)
        #expect(frames.first?.bytes == [UInt8](repeating: 4, count: 100))
        #expect(frames.map { $0.bytes.first } == [4, 5, 6, 7, 8, 9])
        audio.release(before: 600) // frames 0-5: the first two files are no longer needed
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).count == 2)
        #expect(spool.diskBytes == 800)
    }
}
