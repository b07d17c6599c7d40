/// A mono libopus decoder (`OpusDecoder *`), freed when this object goes. Decodes raw Opus packets
/// (of any mode, mono or stereo: stereo is mixed down) to Float samples at `sampleRate`.
///
/// Not thread-safe (libopus decoders keep state between packets); use it from one thread or queue.
public final class OpusDecoder {
    public let sampleRate: Int
    private let handle: OpaquePointer
    /// Room for the longest packet Opus allows (120 ms) at `sampleRate`.
    private var buffer: [Float]

    /// The rates Opus decodes at; anything else throws.
    public static var sampleRates: Set<Int> { LibOpus.sampleRates }

    public init(sampleRate: Int) throws {
        self.sampleRate = sampleRate
        handle = try LibOpus.decoderCreate(sampleRate: sampleRate, channels: 1)
        buffer = [Float](repeating: 0, count: sampleRate * 120 / 1000)
    }

    deinit { LibOpus.decoderDestroy(handle) }

    /// The samples of one packet. A corrupt packet throws and leaves the decoder usable for the next.
    public func decode(_ packet: [UInt8]) throws -> [Float] {
        let capacity = buffer.count
        let count = try packet.withUnsafeBufferPointer { input in
            try buffer.withUnsafeMutableBufferPointer { output in
                try LibOpus.decodeFloat(handle, packet: input, output: output.baseAddress!, maxFrameSize: capacity)
            }
        }
        return Array(buffer[0..<count])
    }

    /// Samples per channel that `packet` holds at `sampleRate` (from its TOC byte; nothing is decoded).
    public static func sampleCount(of packet: [UInt8], sampleRate: Int) throws -> Int {
        try packet.withUnsafeBufferPointer { try LibOpus.packetSampleCount($0, sampleRate: sampleRate) }
    }
}
