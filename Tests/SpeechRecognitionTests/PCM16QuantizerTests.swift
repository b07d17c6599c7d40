import SpeakerSyncAudio
import TestSupport
import Testing
@testable import SpeechRecognition

@Suite struct PCM16QuantizerTests {
    @Test func ditherStaysWithinItsStepsAndRepeats() throws {
        let wav = try #require(TestData.file("sample/sample.wav"), "set SPEAKERSYNC_TEST_DATA")
        let samples = Array(try WAVFile.read(contentsOf: wav).samples.prefix(16_000))
        let plain = PCM16Quantizer(ditherSteps: 0).quantize(samples)
        let dithered = PCM16Quantizer(ditherSteps: 1).quantize(samples)
        // sample.wav is 16-bit PCM: without dither the original integers come back exactly.
        #expect(zip(plain, samples).allSatisfy { Float($0) / 32768 == $1 })
        #expect(zip(plain, dithered).allSatisfy { abs(Int($0) - Int($1)) <= 1 })
        #expect(zip(plain, dithered).contains { $0 != $1 })
        #expect(PCM16Quantizer(ditherSteps: 1).quantize(samples) == dithered)
        // Digital silence no longer quantises to exact zeros.
        #expect(PCM16Quantizer(ditherSteps: 1).quantize([Float](repeating: 0, count: 1000)).contains { $0 != 0 })
    }
}
