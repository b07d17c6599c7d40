// WAVFile, the reader of uploaded WAV files (voice enrolment, POST /v1/people) and of test audio.
//
// Properties: a file that decodes has exactly the frames its data chunk holds (`inspect` agrees,
// and frames × block align fit in the file), the format is one the reader claims to support; and
// the decoded audio written back as 32-bit float WAV reads back bit for bit with the same rate.
import Foundation
import SpeakerSyncAudio

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let file = Data(bytes: data, count: size)
    guard let buffer = try? WAVFile.decode(file) else { return 0 }
    guard let (format, frameCount) = try? WAVFile.inspect(file) else { fatalError("decodes but does not inspect") }
    guard buffer.samples.count == frameCount else { fatalError("\(buffer.samples.count) samples, \(frameCount) frames") }
    guard frameCount * format.blockAlign <= size else {
        fatalError("\(frameCount) frames of \(format.blockAlign) bytes in a \(size)-byte file")
    }
    guard format.blockAlign == format.channelCount * format.bitsPerSample / 8, format.channelCount >= 1 else {
        fatalError("inconsistent format \(format)")
    }
    guard buffer.sampleRate == format.sampleRate, buffer.sampleRate >= 1 else { fatalError("rate \(buffer.sampleRate)") }

    let rewritten = WAVWriter.encode(buffer, format: .float32)
    guard let reread = try? WAVFile.decode(rewritten) else { fatalError("the float WAV written from a decoded file does not decode") }
    guard reread.sampleRate == buffer.sampleRate, reread.samples.map(\.bitPattern) == buffer.samples.map(\.bitPattern) else {
        fatalError("a float WAV round trip changed the audio")
    }
    return 0
}
