/// The elementwise half of one LSTM step. libm's expf/tanhf, called 1,280 times per frame per layer,
/// would cost as much as the matrix products, and Swift's SIMD types compile their rounding and
/// clamping lane by lane; so exp is written as plain float arithmetic that LLVM vectorises: range
/// reduction to [−ln2/2, ln2/2] by the 1.5·2²³ rounding trick, a degree-6 polynomial (relative error
/// ≈ 2·10⁻⁷, below float32 rounding of the gate sums), 2ⁿ built in the exponent bits. Sigmoid is
/// 1/(1+e^−x) and tanh is 2/(1+e^−2x) − 1.
enum LSTMCell {
    /// Applies PyTorch's cell update to `hiddenSize` units: `gates` holds the pre-activations
    /// [i | f | g | o] (each `hiddenSize` long) and is overwritten with the activations, `cell` is
    /// updated in place, `hidden` receives h_t.
    @inline(__always)
    static func update(
        gates: UnsafeMutablePointer<Float>, cell: UnsafeMutablePointer<Float>, hidden: UnsafeMutablePointer<Float>,
        hiddenSize: Int
    ) {
        let input = gates, forget = gates + hiddenSize, candidate = gates + 2 * hiddenSize, output = gates + 3 * hiddenSize
        for unit in 0 ..< 2 * hiddenSize { input[unit] = sigmoid(input[unit]) }  // i and f
        for unit in 0 ..< hiddenSize { candidate[unit] = tanh(candidate[unit]) }
        for unit in 0 ..< hiddenSize { output[unit] = sigmoid(output[unit]) }
        for unit in 0 ..< hiddenSize {
            let c = forget[unit] * cell[unit] + input[unit] * candidate[unit]
            cell[unit] = c
            hidden[unit] = output[unit] * tanh(c)
        }
    }

    @inline(__always)
    static func sigmoid(_ x: Float) -> Float { 1 / (1 + exp(-x)) }

    @inline(__always)
    static func tanh(_ x: Float) -> Float { 2 / (1 + exp(-2 * x)) - 1 }

    @inline(__always)
    static func exp(_ x: Float) -> Float {
        // Beyond ±87 float32 exp overflows or underflows; clamping keeps sigmoid at exactly 0 or 1.
        let clamped = x < -87 ? -87 : (x > 87 ? 87 : x)
        // Adding 1.5·2²³ rounds to the nearest integer n and leaves n in the low mantissa bits.
        let shifted = clamped * 1.442_695_040_888_963_4 + 12_582_912
        let n = shifted - 12_582_912
        let integer = Int32(bitPattern: shifted.bitPattern) &- 0x4B40_0000
        // ln 2 split into a part exact in float32 and the rest, so r keeps its low bits.
        let r = clamped - n * 0.693_145_751_953_125 - n * 1.428_606_765_330_187_0e-6
        var p: Float = 1.0 / 720
        p = p * r + 1.0 / 120
        p = p * r + 1.0 / 24
        p = p * r + 1.0 / 6
        p = p * r + 0.5
        p = p * r + 1
        p = p * r + 1
        return p * Float(bitPattern: UInt32(bitPattern: (integer &+ 127) &<< 23))
    }
}
