import Foundation
import Testing
@testable import SpeakerSyncAudio

@Suite struct WAVFileTests {
    @Test func readsRealPCM16Sample() throws {
        let buffer = try WAVFile.read(contentsOf: TestData.sampleWAV)
        #expect(buffer.sampleRate == 16_000)
        #expect(buffer.samples.count == 480_000)
        #expect(buffer.durationSeconds == 30)
        let peak = buffer.samples.map(abs).max() ?? 0
        #expect(peak > 0.05 && peak <= 1)
        // The file carries a LIST chunk before data; the header must still be found.
        let (format, frames) = try WAVFile.inspect(Data(contentsOf: TestData.sampleWAV))
        #expect(format.encoding == .pcmInteger && format.bitsPerSample == 16 && format.channelCount == 1)
        #expect(frames == 480_000)
    }

    @Test func readsRealFloatAMIExcerpt() throws {
        let data = try Data(contentsOf: TestData.dev00WAV)
        let (format, _) = try WAVFile.inspect(data)
        #expect(format.encoding == .ieeeFloat && format.bitsPerSample == 32)
        let buffer = try WAVFile.decode(data)
        #expect(buffer.sampleRate == 16_000)
        // Its data chunk holds 1,920,004 bytes: 30 s plus one sample.
        #expect(buffer.samples.count == 480_001)
        #expect(buffer.samples.allSatisfy { $0.isFinite && abs($0) <= 1.5 })
        #expect(TestData.rms(buffer.samples[...]) > 1e-3)
    }

    /// sox is an independent writer: 24-bit stereo EXTENSIBLE, 8-bit, 32-bit int and float64 versions of
    /// the sample must decode to the same signal (stereo is the mono signal duplicated, so the downmix
    /// equals it).
    @Test(arguments: [
        (["-b", "24", "-c", "2"], 1e-4),
        (["-b", "32", "-e", "signed-integer"], 1e-4),
        (["-e", "floating-point", "-b", "64"], 1e-6),
        (["-b", "8", "-e", "unsigned-integer", "-D"], 1.0 / 128 + 1e-6),
        (["-b", "16", "-c", "3"], 1e-6),
    ])
    func decodesSoxConversions(options: [String], tolerance: Double) throws {
        let reference = try WAVFile.read(contentsOf: TestData.sampleWAV)
        let url = TestData.temporaryURL("sox-\(options.joined()).wav")
        defer { try? FileManager.default.removeItem(at: url) }
        try TestData.sox(TestData.sampleWAV, options, output: url)
        let buffer = try WAVFile.read(contentsOf: url)
        #expect(buffer.sampleRate == 16_000)
        #expect(buffer.samples.count == reference.samples.count)
        var maxError = 0.0
        for (a, b) in zip(buffer.samples, reference.samples) { maxError = max(maxError, Double(abs(a - b))) }
        #expect(maxError <= tolerance, "max error \(maxError)")
    }

    @Test(arguments: [WAVWriter.SampleFormat.pcm16, .float32])
    func writeReadRoundTrip(format: WAVWriter.SampleFormat) throws {
        // A sweep plus an odd sample count, so the 16-bit file needs a padding byte.
        let samples = (0 ..< 16_001).map { i in Float(0.8 * sin(Double(i) * Double(i) * 1e-5)) }
        let url = TestData.temporaryURL("roundtrip-\(format.rawValue).wav")
        defer { try? FileManager.default.removeItem(at: url) }
        try WAVWriter.write(AudioBuffer(samples: samples, sampleRate: 22_050), to: url, format: format)
        let back = try WAVFile.read(contentsOf: url)
        #expect(back.sampleRate == 22_050)
        #expect(back.samples.count == samples.count)
        let maxError = zip(back.samples, samples).map { abs($0 - $1) }.max() ?? 1
        #expect(maxError <= (format == .pcm16 ? 1.0 / 65_536 + 1e-7 : 0))
        // sox must agree the file is valid and of the right length.
        let soxOut = TestData.temporaryURL("roundtrip-\(format.rawValue)-sox.wav")
        defer { try? FileManager.default.removeItem(at: soxOut) }
        try TestData.sox(url, ["-b", "16"], output: soxOut)
        #expect(try WAVFile.read(contentsOf: soxOut).samples.count == samples.count)
    }

    @Test func skipsOddSizedUnknownChunksAndDecodesEXTENSIBLEFloat() throws {
        var file = WAVBytes()
        file.chunk("LIST", Array("INFOabc".utf8))  // 7 bytes: followed by a pad byte
        file.fmt(tag: 0xFFFE, channels: 2, rate: 8_000, bits: 32, extensibleSubFormat: 3)
        file.chunk("junk", [1, 2, 3])
        let frames: [(Float, Float)] = [(0.5, -0.5), (1, 0), (-0.25, -0.75)]
        file.chunk("data", frames.flatMap { le($0.0.bitPattern) + le($0.1.bitPattern) })
        let buffer = try WAVFile.decode(file.data)
        #expect(buffer.sampleRate == 8_000)
        #expect(buffer.samples == [0, 0.5, -0.5])
    }

    @Test func streamingDataSizeMeansUntilEndOfFile() throws {
        // espeak-ng --stdout cannot seek back, so it writes 0x7FFFF000 as the data size.
        var file = WAVBytes()
        file.fmt(tag: 1, channels: 1, rate: 22_050, bits: 16)
        file.rawChunk("data", size: 0x7FFF_F000, body: le(UInt16(bitPattern: 16_384)) + le(UInt16(bitPattern: -8_192)))
        let buffer = try WAVFile.decode(file.data)
        #expect(buffer.samples == [0.5, -0.25])
    }

    /// Found by Fuzz/FuzzWAVFile: a 44-byte header claiming 2,105,540,670 Hz decoded, and writing the
    /// audio back trapped in WAVWriter (the byte rate does not fit 32 bits). Rates above 1 MHz are refused.
    @Test func refusesSampleRatesAboveOneMegahertz() throws {
        let crash: [UInt8] = Array("RIFF".utf8) + [0x2C, 0, 0, 0] + Array("WAVEfmt ".utf8) + [0x10, 0, 0, 0, 0x01, 0, 0x02, 0,
            0x3E, 0x00, 0x80, 0x7D, 0, 0, 0, 0, 0x02, 0, 0x08, 0] + Array("data".utf8) + [0, 0, 0, 0]
        #expect(throws: AudioError(.unsupportedFormat, "sample rate 2105540670 Hz is above 1000000 Hz")) {
            try WAVFile.decode(Data(crash))
        }
        var fastest = WAVBytes()
        fastest.fmt(tag: 3, channels: 1, rate: UInt32(WAVFile.maxSampleRate), bits: 32)
        fastest.chunk("data", le(Float(0.5).bitPattern))
        let buffer = try WAVFile.decode(fastest.data)
        #expect(try WAVFile.decode(WAVWriter.encode(buffer, format: .float32)) == buffer)
    }

    @Test func malformedFilesGiveSpecificCodes() throws {
        func code(_ data: Data) -> AudioError.Code? {
            do { _ = try WAVFile.decode(data); return nil } catch let error as AudioError { return error.code } catch {
                return nil
            }
        }
        #expect(code(Data("hello, this is not audio".utf8)) == .notRIFF)
        #expect(code(Data()) == .notRIFF)

        var notWave = WAVBytes(form: "AVI ")
        notWave.fmt(tag: 1, channels: 1, rate: 16_000, bits: 16)
        #expect(code(notWave.data) == .notWAVE)

        var adpcm = WAVBytes()
        adpcm.fmt(tag: 2, channels: 1, rate: 16_000, bits: 4, blockAlign: 256)
        adpcm.chunk("data", [0, 0])
        #expect(code(adpcm.data) == .unsupportedFormat)

        var twelveBit = WAVBytes()
        twelveBit.fmt(tag: 1, channels: 1, rate: 16_000, bits: 12, blockAlign: 2)
        twelveBit.chunk("data", [0, 0])
        #expect(code(twelveBit.data) == .unsupportedFormat)

        var noChannels = WAVBytes()
        noChannels.fmt(tag: 1, channels: 0, rate: 16_000, bits: 16, blockAlign: 0)
        noChannels.chunk("data", [0, 0])
        #expect(code(noChannels.data) == .invalidFormat)

        var dataFirst = WAVBytes()
        dataFirst.chunk("data", [0, 0])
        dataFirst.fmt(tag: 1, channels: 1, rate: 16_000, bits: 16)
        #expect(code(dataFirst.data) == .missingFormat)

        var noData = WAVBytes()
        noData.fmt(tag: 1, channels: 1, rate: 16_000, bits: 16)
        #expect(code(noData.data) == .missingData)

        // A real file cut in the middle of its data chunk.
        let real = try Data(contentsOf: TestData.sampleWAV)
        #expect(code(real.prefix(10_000)) == .truncated)
        #expect(code(real.prefix(8)) == .truncated)

        var unknownGUID = WAVBytes()
        unknownGUID.fmt(tag: 0xFFFE, channels: 1, rate: 16_000, bits: 16, extensibleSubFormat: 1, guidByte: 0x42)
        unknownGUID.chunk("data", [0, 0])
        #expect(code(unknownGUID.data) == .unsupportedFormat)

        #expect(throws: AudioError.self) { try WAVFile.read(contentsOf: URL(fileURLWithPath: "/nonexistent.wav")) }
    }
}

/// Hand-built RIFF/WAVE bytes for header edge cases.
struct WAVBytes {
    var body: [UInt8] = []
    let form: String

    init(form: String = "WAVE") { self.form = form }

    var data: Data {
        Data(Array("RIFF".utf8) + le(UInt32(4 + body.count)) + Array(form.utf8) + body)
    }

    mutating func rawChunk(_ id: String, size: UInt32, body chunkBody: [UInt8]) {
        body += Array(id.utf8) + le(size) + chunkBody
    }

    mutating func chunk(_ id: String, _ chunkBody: [UInt8]) {
        rawChunk(id, size: UInt32(chunkBody.count), body: chunkBody + (chunkBody.count % 2 == 1 ? [0] : []))
    }

    mutating func fmt(tag: UInt16, channels: UInt16, rate: UInt32, bits: UInt16, blockAlign: UInt16? = nil,
                      extensibleSubFormat: UInt16? = nil, guidByte: UInt8 = 0x10) {
        let align = blockAlign ?? channels * bits / 8
        var fmt = le(tag) + le(channels) + le(rate) + le(rate * UInt32(align)) + le(align) + le(bits)
        if let sub = extensibleSubFormat {
            fmt += le(UInt16(22)) + le(bits) + le(UInt32(0)) + le(sub)
            fmt += [0x00, 0x00, 0x00, 0x00, guidByte, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        }
        chunk("fmt ", fmt)
    }
}

func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
}
