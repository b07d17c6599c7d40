// PCMFrameDecoder, which turns a device's binary audio frames into samples.
//
// Input: byte 0 picks the encoding (even: s16le, odd: f32le), byte 1 how many cuts (0-15), the
// next that many bytes where the payload is cut into frames, the rest is the payload.
//
// Properties (the decoder's documented promise): decoding the payload cut into any frames gives
// exactly the samples of decoding it in one piece; there are payload / width samples, all finite
// (s16le within -1…1); `finish` reports the payload % width bytes of a trailing partial sample.
import SessionProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.count >= 2 else { return 0 }
    let encoding: AudioEncoding = bytes[0] % 2 == 0 ? .pcmS16LE : .pcmF32LE
    let cutCount = Int(bytes[1] % 16)
    guard bytes.count >= 2 + cutCount else { return 0 }
    let payload = Array(bytes[(2 + cutCount)...])
    let cuts = bytes[2..<(2 + cutCount)].map { payload.isEmpty ? 0 : Int($0) % (payload.count + 1) }.sorted()
    let width = encoding.bytesPerSample!

    var whole = PCMFrameDecoder(encoding: encoding)
    let expected = whole.decode(payload)
    guard expected.count == payload.count / width else { fatalError("\(expected.count) samples from \(payload.count) bytes") }
    guard whole.finish() == payload.count % width else { fatalError("finish() miscounts the partial sample") }
    for sample in expected {
        guard sample.isFinite else { fatalError("a non-finite sample \(sample)") }
        if encoding == .pcmS16LE, !(-1...1).contains(sample) { fatalError("s16le sample \(sample) outside -1…1") }
    }

    var split = PCMFrameDecoder(encoding: encoding)
    var samples: [Float] = []
    var start = 0
    for cut in cuts + [payload.count] {
        samples += split.decode(Array(payload[start..<cut]))
        start = cut
    }
    guard samples.map(\.bitPattern) == expected.map(\.bitPattern) else { fatalError("cutting at \(cuts) changed the samples") }
    guard split.sampleCount == Int64(expected.count) else { fatalError("sampleCount \(split.sampleCount) != \(expected.count)") }
    guard split.finish() == payload.count % width else { fatalError("finish() after cuts miscounts the partial sample") }
    return 0
}
