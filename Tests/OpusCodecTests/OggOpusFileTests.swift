import ChildProcesses
import Foundation
import SpeakerSyncAudio
import Testing

@testable import OpusCodec

/// The Ogg demuxer against files made by opus-tools' `opusenc`, and against hand-made pages for the
/// cases opusenc does not produce (a packet across pages, a bad checksum).
@Suite struct OggOpusFileTests {
    /// `samples` written as a WAV and encoded with opusenc; nil (and an issue) when opusenc is missing.
    static func opusenc(_ samples: [Float], sampleRate: Int, arguments: [String] = []) throws -> [UInt8]? {
        guard let opusenc = ["/usr/bin/opusenc", "/usr/local/bin/opusenc"].first(where: FileManager.default.isExecutableFile) else {
            Issue.record("opusenc is missing: install opus-tools (scripts/setup does)")
            return nil
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ogg-opus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("in.wav")
        let ogg = folder.appendingPathComponent("out.opus")
        try WAVWriter.write(AudioBuffer(samples: samples, sampleRate: sampleRate), to: wav)
        let done = try Subprocess.run(Subprocess.Configuration(executable: opusenc, arguments: ["--quiet"] + arguments + [wav.path, ogg.path]))
        try #require(done.exit.succeeded, "\(done.exit): \(done.standardErrorText)")
        return Array(try Data(contentsOf: ogg))
    }

    /// A gliding tone with pauses: speech-like enough for a codec, and exact to compare.
    static func chirp(seconds: Double, sampleRate: Int) -> [Float] {
        (0..<Int(seconds * Double(sampleRate))).map { index in
            let t = Double(index) / Double(sampleRate)
            let gate = sin(2 * Double.pi * 1.5 * t) > -0.3 ? 1.0 : 0.0
            return Float(0.4 * gate * sin(2 * Double.pi * (200 * t + 150 * t * t)))
        }
    }

    @Test func opusencFileGivesItsHeadAndEveryPacket() throws {
        let source = Self.chirp(seconds: 3, sampleRate: 16_000)
        guard let bytes = try Self.opusenc(source, sampleRate: 16_000, arguments: ["--bitrate", "32", "--framesize", "20"]) else { return }
        let file = try OggOpusFile(bytes: bytes)
        #expect(file.channelCount == 1)
        #expect(file.inputSampleRate == 16_000)
        #expect(file.preSkip > 0)
        // The last granule position is pre-skip plus the source's length on the 48 kHz timeline.
        #expect(file.finalGranulePosition == Int64(file.preSkip + source.count * 3))
        // 20 ms packets cover pre-skip plus the audio (the last one padded).
        let expectedPackets = (file.preSkip + source.count * 3 + 959) / 960
        #expect(file.packets.count == expectedPackets)

        // Decoded at 16 kHz with pre-skip dropped, the packets give back the source.
        let decoder = try OpusDecoder(sampleRate: 16_000)
        var decoded: [Float] = []
        for packet in file.packets {
            #expect(try OpusDecoder.sampleCount(of: packet, sampleRate: 48_000) == 960)
            decoded += try decoder.decode(packet)
        }
        let skip = file.preSkip / 3
        let aligned = decoded[skip..<skip + source.count]
        let correlation = OpusRoundTripTests.correlation(source[...], aligned)
        #expect(correlation > 0.9, "correlation \(correlation)")
    }

    @Test func stereoFilesAreReadAndMultistreamFilesRefused() throws {
        let mono = Self.chirp(seconds: 0.5, sampleRate: 48_000)
        // Two channels, interleaved, as a WAV: opusenc keeps mapping family 0.
        guard let stereo = try Self.stereoOpusenc(mono) else { return }
        let file = try OggOpusFile(bytes: stereo)
        #expect(file.channelCount == 2)
        #expect(!file.packets.isEmpty)
    }

    static func stereoOpusenc(_ samples: [Float]) throws -> [UInt8]? {
        // opusenc reads raw PCM with --raw; two interleaved 16-bit channels.
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/opusenc") else {
            Issue.record("opusenc is missing: install opus-tools")
            return nil
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ogg-stereo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var raw = Data()
        for sample in samples {
            let value = Int16(sample * 32_000)
            for _ in 0..<2 { withUnsafeBytes(of: value.littleEndian) { raw.append(contentsOf: $0) } }
        }
        let input = folder.appendingPathComponent("in.raw")
        let output = folder.appendingPathComponent("out.opus")
        try raw.write(to: input)
        let done = try Subprocess.run(Subprocess.Configuration(
            executable: "/usr/bin/opusenc", arguments: ["--quiet", "--raw", "--raw-chan", "2", "--raw-rate", "48000", input.path, output.path]))
        try #require(done.exit.succeeded, "\(done.exit): \(done.standardErrorText)")
        return Array(try Data(contentsOf: output))
    }

    // MARK: hand-made pages

    /// One Ogg page holding `segments` (already laced), with a correct CRC.
    static func page(_ body: [UInt8], lacing: [UInt8], flags: UInt8, sequence: UInt32, granule: Int64 = 0, serial: UInt32 = 7) -> [UInt8] {
        var page = Array("OggS".utf8) + [0, flags]
        for shift in stride(from: 0, to: 64, by: 8) { page.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: granule) >> UInt64(shift))) }
        for value in [serial, sequence, 0] {
            for shift in stride(from: 0, to: 32, by: 8) { page.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }
        page.append(UInt8(lacing.count))
        page += lacing + body
        var crc = OggCRC()
        crc.update(page)
        for (index, shift) in [0, 8, 16, 24].enumerated() { page[22 + index] = UInt8(truncatingIfNeeded: crc.value >> UInt32(shift)) }
        return page
    }

    static let head: [UInt8] = Array("OpusHead".utf8) + [1, 1, 0x38, 0x01, 0x80, 0x3e, 0, 0, 0, 0, 0]  // pre-skip 312, 16 kHz
    static let tags: [UInt8] = Array("OpusTags".utf8) + [0, 0, 0, 0, 0, 0, 0, 0]

    @Test func aPacketContinuedOnTheNextPageIsJoined() throws {
        let big = (0..<300).map { UInt8(truncatingIfNeeded: $0) }  // 300 bytes: lacing 255, 45
        var file = Self.page(Self.head, lacing: [19], flags: 0x02, sequence: 0)
        file += Self.page(Self.tags, lacing: [16], flags: 0, sequence: 1)
        // The first 255 bytes end this page with lacing 255: the packet goes on.
        file += Self.page([0xF8, 1] + Array(big[0..<255]), lacing: [2, 255], flags: 0, sequence: 2, granule: 960)
        file += Self.page(Array(big[255...]), lacing: [45], flags: 0x01 | 0x04, sequence: 3, granule: 1_920)
        let parsed = try OggOpusFile(bytes: file)
        #expect(parsed.preSkip == 312)
        #expect(parsed.inputSampleRate == 16_000)
        #expect(parsed.packets == [[0xF8, 1], big])
        #expect(parsed.finalGranulePosition == 1_920)
    }

    @Test func damagedAndForeignFilesAreRefused() throws {
        var file = Self.page(Self.head, lacing: [19], flags: 0x02, sequence: 0)
        file += Self.page(Self.tags, lacing: [16], flags: 0x04, sequence: 1)
        #expect(try OggOpusFile(bytes: file).packets.isEmpty)
        var damaged = file
        damaged[30] ^= 0xFF
        #expect(throws: OggOpusError.badChecksum(0)) { try OggOpusFile(bytes: damaged) }
        #expect(throws: OggOpusError.truncated("page body at byte 0")) { try OggOpusFile(bytes: Array(file[0..<40])) }
        #expect(throws: OggOpusError.notOgg(0)) { try OggOpusFile(bytes: Array("RIFF....WAVE".utf8) + [UInt8](repeating: 0, count: 40)) }
        let vorbis = Self.page(Array("\u{1}vorbis".utf8) + [UInt8](repeating: 0, count: 23), lacing: [30], flags: 0x02, sequence: 0)
        #expect(throws: OggOpusError.notOpus("the first packet is not OpusHead")) { try OggOpusFile(bytes: vorbis) }
    }
}
