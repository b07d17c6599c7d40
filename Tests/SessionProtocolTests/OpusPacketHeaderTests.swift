import Testing

@testable import SessionProtocol

/// RFC 6716 §3.1-3.4: the TOC byte, the four frame-count codes and the framing rules R1-R7.
@Suite struct OpusPacketHeaderTests {
    static func toc(config: Int, stereo: Bool = false, code: Int) -> UInt8 {
        UInt8(config << 3 | (stereo ? 4 : 0) | code)
    }

    /// Table 2's frame durations for every configuration, in 48 kHz samples.
    @Test(arguments: 0..<32)
    func everyConfigurationHasItsFrameDuration(config: Int) throws {
        let expected: Int
        switch config {
        case 0...11: expected = [480, 960, 1_920, 2_880][config % 4]  // SILK 10/20/40/60 ms
        case 12...15: expected = [480, 960][config % 2]  // hybrid 10/20 ms
        default: expected = [120, 240, 480, 960][config % 4]  // CELT 2.5/5/10/20 ms
        }
        let header = try OpusPacketHeader(packet: [Self.toc(config: config, code: 0), 0xAA, 0xBB])
        #expect(header.configuration == config)
        #expect(header.frameCount == 1)
        #expect(header.samplesPerFrameAt48k == expected)
        // Every duration is a whole number of samples at each decode rate.
        for rate in OpusPacketHeader.decodeRates {
            #expect(header.sampleCount(atRate: rate) * 48_000 == expected * rate)
        }
    }

    @Test func stereoFlagIsRead() throws {
        #expect(try OpusPacketHeader(packet: [Self.toc(config: 31, stereo: true, code: 0)]).isStereo)
        #expect(try !OpusPacketHeader(packet: [Self.toc(config: 31, code: 0)]).isStereo)
    }

    @Test func code0IsOneFrameAndATOCAloneIsAnEmptyFrame() throws {
        // A TOC byte alone is a valid packet (a zero-length frame: DTX); 16 kHz SILK 20 ms.
        let header = try OpusPacketHeader(packet: [Self.toc(config: 9, code: 0)])
        #expect(header.frameCount == 1)
        #expect(header.sampleCount(atRate: 16_000) == 320)
    }

    @Test func code1IsTwoEqualFrames() throws {
        let header = try OpusPacketHeader(packet: [Self.toc(config: 31, code: 1), 1, 2, 3, 4])
        #expect(header.frameCount == 2)
        #expect(header.samplesAt48k == 1_920)  // 2 × 20 ms CELT
        #expect(throws: OpusPacketError.oddLengthForEqualFrames(3)) {
            try OpusPacketHeader(packet: [Self.toc(config: 31, code: 1), 1, 2, 3])
        }
    }

    @Test func code2CodesTheFirstLengthInOneOrTwoBytes() throws {
        // First frame 2 bytes, second the remaining 3.
        let short = try OpusPacketHeader(packet: [Self.toc(config: 1, code: 2), 2, 9, 9, 8, 8, 8])
        #expect(short.frameCount == 2)
        #expect(short.samplesAt48k == 1_920)
        // 252 + 4 × 1 = 256 bytes first, then 10 more.
        let long = [Self.toc(config: 1, code: 2), 252, 1] + [UInt8](repeating: 7, count: 266)
        #expect(try OpusPacketHeader(packet: long).frameCount == 2)
        #expect(throws: OpusPacketError.lengthsExceedPacket) {
            try OpusPacketHeader(packet: [Self.toc(config: 1, code: 2), 5, 1, 2])
        }
        #expect(throws: OpusPacketError.truncated) {
            try OpusPacketHeader(packet: [Self.toc(config: 1, code: 2)])
        }
        #expect(throws: OpusPacketError.truncated) {
            try OpusPacketHeader(packet: [Self.toc(config: 1, code: 2), 253])
        }
    }

    @Test func code3ConstantBitrate() throws {
        // 3 frames of 2 bytes, 60 ms of 20 ms CELT.
        let header = try OpusPacketHeader(packet: [Self.toc(config: 31, code: 3), 3, 1, 1, 2, 2, 3, 3])
        #expect(header.frameCount == 3)
        #expect(header.sampleCount(atRate: 16_000) == 960)
        #expect(throws: OpusPacketError.unequalFrames(5, 3)) {
            try OpusPacketHeader(packet: [Self.toc(config: 31, code: 3), 3, 1, 1, 2, 2, 3])
        }
    }

    @Test func code3VariableBitrateWithPadding() throws {
        // VBR, padded, 2 frames; padding 255 then 1 = 254 + 1 = 255 bytes; first frame 1 byte, second 2.
        let packet = [Self.toc(config: 31, code: 3), 0x80 | 0x40 | 2, 255, 1, 1, 0xA, 0xB, 0xB]
            + [UInt8](repeating: 0, count: 255)
        let header = try OpusPacketHeader(packet: packet)
        #expect(header.frameCount == 2)
        // The padding claims more bytes than there are.
        #expect(throws: OpusPacketError.lengthsExceedPacket) {
            try OpusPacketHeader(packet: [Self.toc(config: 31, code: 3), 0x40 | 1, 200, 1, 2])
        }
        // A VBR length beyond the packet.
        #expect(throws: OpusPacketError.lengthsExceedPacket) {
            try OpusPacketHeader(packet: [Self.toc(config: 31, code: 3), 0x80 | 2, 9, 1])
        }
    }

    @Test func code3FrameCountMustBeOneTo120Milliseconds() throws {
        #expect(throws: OpusPacketError.zeroFrameCount) {
            try OpusPacketHeader(packet: [Self.toc(config: 31, code: 3), 0])
        }
        #expect(throws: OpusPacketError.truncated) {
            try OpusPacketHeader(packet: [Self.toc(config: 31, code: 3)])
        }
        // 6 × 20 ms = 120 ms is the limit; 7 × 20 ms is over it, as are 3 × 60 ms SILK frames.
        #expect(try OpusPacketHeader(packet: [Self.toc(config: 31, code: 3), 6]).samplesAt48k == 5_760)
        #expect(throws: OpusPacketError.tooLong(milliseconds: 140)) {
            try OpusPacketHeader(packet: [Self.toc(config: 31, code: 3), 7])
        }
        #expect(throws: OpusPacketError.tooLong(milliseconds: 180)) {
            try OpusPacketHeader(packet: [Self.toc(config: 3, code: 3), 3])
        }
        // 48 frames of 2.5 ms is exactly 120 ms.
        #expect(try OpusPacketHeader(packet: [Self.toc(config: 16, code: 3), 48]).frameCount == 48)
    }

    @Test func emptyAndOversizedFramesAreRejected() {
        #expect(throws: OpusPacketError.empty) { try OpusPacketHeader(packet: []) }
        let oversized = [Self.toc(config: 31, code: 0)] + [UInt8](repeating: 1, count: 1_276)
        #expect(throws: OpusPacketError.frameTooLong(1_276)) { try OpusPacketHeader(packet: oversized) }
    }
}
