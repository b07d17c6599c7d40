/// IEEE 754 binary16 conversion, done by hand because Swift's `Float16` is unavailable on Intel macOS,
/// one of the package's platforms. Raw embedding history is stored in this format: half the bytes of
/// `Float`, and for unit vectors a relative error below 2^-11 per component, far under the differences
/// that separate speakers. Tests check both directions against `Float16` on Linux.
enum HalfPrecision {
    /// Rounds to the nearest binary16 value, ties to even; too large becomes infinity, too small zero.
    static func bits(from value: Float) -> UInt16 {
        let bits = value.bitPattern
        let sign = UInt16(truncatingIfNeeded: (bits >> 16) & 0x8000)
        let exponent = Int((bits >> 23) & 0xFF)
        let mantissa = bits & 0x7F_FFFF
        if exponent == 0xFF {
            // Infinity stays infinity; NaN stays a quiet NaN with the top payload bits.
            return mantissa == 0 ? sign | 0x7C00 : sign | 0x7E00 | UInt16(truncatingIfNeeded: mantissa >> 13)
        }
        let halfExponent = exponent - 127 + 15
        if halfExponent >= 0x1F { return sign | 0x7C00 }
        if halfExponent <= 0 {
            // Subnormal half (or zero): shift the mantissa, with its implicit bit, into 10 bits.
            if halfExponent < -10 { return sign }
            let full = mantissa | 0x80_0000
            let shift = UInt32(14 - halfExponent)
            var result = full >> shift
            let remainder = full & ((1 << shift) - 1)
            let halfway = UInt32(1) << (shift - 1)
            if remainder > halfway || (remainder == halfway && result & 1 == 1) { result += 1 }
            return sign | UInt16(truncatingIfNeeded: result)
        }
        var result = UInt32(halfExponent) << 10 | (mantissa >> 13)
        let remainder = mantissa & 0x1FFF
        // A carry out of the mantissa correctly bumps the exponent (up to infinity).
        if remainder > 0x1000 || (remainder == 0x1000 && result & 1 == 1) { result += 1 }
        return sign | UInt16(truncatingIfNeeded: result)
    }

    /// Exact: every binary16 value is representable as a `Float`.
    static func value(from bits: UInt16) -> Float {
        let sign = UInt32(bits & 0x8000) << 16
        let exponent = UInt32(bits >> 10) & 0x1F
        let mantissa = UInt32(bits & 0x3FF)
        switch exponent {
        case 0:
            let magnitude = Float(mantissa) * 0x1p-24
            return sign == 0 ? magnitude : -magnitude
        case 0x1F:
            return Float(bitPattern: sign | 0x7F80_0000 | (mantissa << 13))
        default:
            return Float(bitPattern: sign | ((exponent + 112) << 23) | (mantissa << 13))
        }
    }

    static func encode(_ values: [Float]) -> [UInt16] {
        [UInt16](unsafeUninitializedCapacity: values.count) { buffer, count in
            for index in values.indices { buffer[index] = bits(from: values[index]) }
            count = values.count
        }
    }

    static func decode(_ bits: [UInt16]) -> [Float] {
        [Float](unsafeUninitializedCapacity: bits.count) { buffer, count in
            for index in bits.indices { buffer[index] = value(from: bits[index]) }
            count = bits.count
        }
    }
}
