@testable import SpeakerManager
import Testing

/// The hand-written binary16 codec against Swift's `Float16` (available on Linux x86_64 and arm64).
@Suite struct HalfPrecisionTests {
    #if !(os(macOS) && arch(x86_64))
    @Test func decodingMatchesFloat16ForEveryBitPattern() {
        var mismatches = 0
        for bits in UInt16.min...UInt16.max {
            let reference = Float(Float16(bitPattern: bits))
            let decoded = HalfPrecision.value(from: bits)
            if reference.isNaN ? !decoded.isNaN : decoded.bitPattern != reference.bitPattern { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    @Test func encodingRoundsLikeFloat16AcrossTheFloatRange() {
        var mismatches: [UInt32] = []
        var checked = 0
        // Every 4099th Float bit pattern (about a million, all exponents and signs), plus the edges.
        let edges: [Float] = [
            0, -0, 65504, 65519.996, 65520, -65520, 0x1p-14, 0x1p-24, 0x1p-25, 0x1.8p-25, 0x1p-26, .infinity,
            -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 1 + 0x1p-11, 1 + 0x1.8p-11,
        ]
        let sweep = stride(from: UInt64(0), through: UInt64(UInt32.max), by: 4099).map { Float(bitPattern: UInt32($0)) }
        for value in edges + sweep where !value.isNaN {
            checked += 1
            if HalfPrecision.bits(from: value) != Float16(value).bitPattern { mismatches.append(value.bitPattern) }
        }
        #expect(checked > 1_000_000)
        #expect(mismatches.isEmpty, "first mismatching Float bit patterns: \(mismatches.prefix(5))")
        #expect(HalfPrecision.value(from: HalfPrecision.bits(from: .nan)).isNaN)
    }
    #endif

    @Test func roundTripOfHalfValuesIsExact() {
        let broken = (UInt16.min...UInt16.max).filter { bits in
            let value = HalfPrecision.value(from: bits)
            return !value.isNaN && HalfPrecision.bits(from: value) != bits
        }
        #expect(broken.isEmpty, "first half patterns that do not round-trip: \(broken.prefix(5))")
    }
}
