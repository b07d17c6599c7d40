// OpusPacketHeader, the Swift check of each binary message of an `encoding: "opus"` session.
//
// Property (its documented promise): a packet the header accepts is one libopus accepts as far as
// framing goes, with the same number of samples: libopus's opus_packet_get_nb_samples agrees, and
// a libopus decoder decodes it to exactly `sampleCount(atRate:)` samples. The session timeline
// counts samples from the header, so a disagreement would shift every later word.
import OpusCodec
import SessionProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let packet = Array(UnsafeBufferPointer(start: data, count: size))
    guard let header = try? OpusPacketHeader(packet: packet) else { return 0 }
    guard header.samplesAt48k <= OpusPacketHeader.maxSamplesAt48k else { fatalError("accepted \(header.samplesAt48k) samples") }
    let counted: Int
    do {
        counted = try OpusDecoder.sampleCount(of: packet, sampleRate: 48_000)
    } catch {
        fatalError("the header accepts a packet libopus cannot count: \(error)")
    }
    guard counted == header.samplesAt48k else { fatalError("libopus counts \(counted) samples, the header \(header.samplesAt48k)") }
    // A fresh decoder for each input, so that a crash reproduces from its input alone.
    let rate = 16_000
    let decoded: [Float]
    do {
        decoded = try OpusDecoder(sampleRate: rate).decode(packet)
    } catch {
        fatalError("the header accepts a packet libopus refuses to decode: \(error)")
    }
    guard decoded.count == header.sampleCount(atRate: rate) else {
        fatalError("libopus decoded \(decoded.count) samples, the header says \(header.sampleCount(atRate: rate))")
    }
    return 0
}
