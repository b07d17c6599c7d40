/// Appends little-endian values to a byte buffer: the encoding of every frame between the server and
/// its provider workers. Both sides are the same binary on the same machine, so the format needs no
/// negotiation beyond `WorkerProtocol.version`; it is still explicit (fixed widths, little-endian,
/// length-prefixed strings and arrays) so that a frame means one thing whatever the compiler does.
struct WireWriter {
    private(set) var bytes: [UInt8]

    init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func i32(_ value: Int32) { u32(UInt32(bitPattern: value)) }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func f32(_ value: Float) { u32(value.bitPattern) }
    mutating func f64(_ value: Double) { u64(value.bitPattern) }

    mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            u32(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func optionalString(_ value: String?) {
        bool(value != nil)
        if let value { string(value) }
    }

    /// A count then the raw floats: audio crosses the boundary as one copy into the frame.
    mutating func floats(_ values: UnsafeBufferPointer<Float>) {
        u32(UInt32(values.count))
        #if _endian(little)
        bytes.append(contentsOf: UnsafeRawBufferPointer(values))
        #else
        for value in values { f32(value) }
        #endif
    }

    mutating func floats(_ values: [Float]) {
        values.withUnsafeBufferPointer { floats($0) }
    }
}

/// Reads what `WireWriter` wrote; every read checks the bounds and throws `WireError` on a short or
/// malformed frame instead of trapping, so a corrupt frame ends the worker connection, not the server.
struct WireReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { offset == bytes.count }

    private mutating func take(_ count: Int, _ what: String) throws(WireError) -> UnsafeRawBufferPointer {
        guard count >= 0, bytes.count - offset >= count else {
            throw WireError("frame ends inside \(what) (needs \(count) bytes at \(offset) of \(bytes.count))")
        }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + count])
    }

    mutating func u8() throws(WireError) -> UInt8 { try take(1, "a byte")[0] }

    mutating func bool() throws(WireError) -> Bool {
        let value = try u8()
        guard value <= 1 else { throw WireError("a boolean byte holds \(value)") }
        return value == 1
    }

    mutating func u32() throws(WireError) -> UInt32 {
        UInt32(littleEndian: try take(4, "a 32-bit value").loadUnaligned(as: UInt32.self))
    }

    mutating func i32() throws(WireError) -> Int32 { Int32(bitPattern: try u32()) }

    mutating func u64() throws(WireError) -> UInt64 {
        UInt64(littleEndian: try take(8, "a 64-bit value").loadUnaligned(as: UInt64.self))
    }

    mutating func f32() throws(WireError) -> Float { Float(bitPattern: try u32()) }
    mutating func f64() throws(WireError) -> Double { Double(bitPattern: try u64()) }

    mutating func string() throws(WireError) -> String {
        let count = Int(try u32())
        return String(decoding: try take(count, "a string"), as: UTF8.self)
    }

    mutating func optionalString() throws(WireError) -> String? {
        try bool() ? try string() : nil
    }

    mutating func floats() throws(WireError) -> [Float] {
        let count = Int(try u32())
        guard count <= (bytes.count - offset) / 4 else { throw WireError("an array of \(count) floats is longer than its frame") }
        let raw = try take(count * 4, "floats")
        #if _endian(little)
        return [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: raw)
            initialized = count
        }
        #else
        return (0 ..< count).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        #endif
    }

    /// An element count that cannot exceed what the rest of the frame could hold at `minimumSize`
    /// bytes an element (a corrupt count must not make the reader reserve gigabytes).
    mutating func count(minimumElementSize: Int, _ what: String) throws(WireError) -> Int {
        let count = Int(try u32())
        guard count <= (bytes.count - offset) / max(1, minimumElementSize) else {
            throw WireError("\(count) \(what) cannot fit in the rest of the frame")
        }
        return count
    }
}

/// A frame that does not decode: the peer is not the same build, or memory was corrupted.
public struct WireError: Error, CustomStringConvertible, Sendable {
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { "worker protocol error: \(message)" }
}
