import Foundation

/// Converts audio from any supported input rate to `config.outputRate` (16 kHz), chunk by chunk.
///
/// Polyphase windowed-sinc (Kaiser) over the reduced rational ratio L/M = out/in: output sample j sits
/// at input time j·M/L, and its fractional position selects one of L precomputed filter phases.
/// The filter is symmetric and centred on that time, so output is aligned with input (no group delay);
/// the price is that each output waits for `halfWidth` future input samples, which `flush()` supplies
/// as zeros at the end of the stream.
///
/// Every output is the same dot product whatever the chunking, so feeding a stream in pieces of any
/// size gives bit-identical results to feeding it at once. Equal input and output rates pass through
/// untouched.
public struct StreamingResampler: Sendable {
    public let inputRate: Int
    public let config: ResamplerConfig
    /// Upsampling factor L of the reduced ratio.
    public let interpolation: Int
    /// Downsampling factor M of the reduced ratio.
    public let decimation: Int
    /// Input samples each side of an output instant that contribute to it.
    public let halfWidth: Int

    /// Filter taps per phase (2·halfWidth rounded up to the SIMD width; the excess taps are zero).
    let tapCount: Int
    /// `interpolation` phases × `tapCount` taps, phase-major.
    let coefficients: [Float]
    let isPassthrough: Bool

    /// Input not yet fully consumed; `history[0]` is absolute input sample `historyStart`.
    var history: [Float]
    var historyStart: Int
    /// Integer part and phase (numerator over `interpolation`) of the next output's input time.
    var nextBase: Int
    var nextPhase: Int
    var inputCount: Int

    public init(inputRate: Int, config: ResamplerConfig = .default) throws {
        guard config.supportedInputRates.contains(inputRate) else {
            throw AudioError(.invalidArgument,
                             "input rate \(inputRate) Hz outside \(config.supportedInputRates) Hz")
        }
        guard config.outputRate > 0, config.zeroCrossings > 0, config.cutoffRatio > 0,
              config.cutoffRatio <= 1 else {
            throw AudioError(.invalidArgument, "invalid resampler configuration")
        }
        self.inputRate = inputRate
        self.config = config
        let divisor = Self.gcd(inputRate, config.outputRate)
        interpolation = config.outputRate / divisor
        decimation = inputRate / divisor
        isPassthrough = inputRate == config.outputRate

        // Cutoff in cycles per input sample; the kernel is sinc(2·fc·τ) scaled to unit DC gain.
        let cutoff = config.cutoffRatio * Double(min(inputRate, config.outputRate)) / 2 / Double(inputRate)
        halfWidth = isPassthrough ? 0 : Int((Double(config.zeroCrossings) / (2 * cutoff)).rounded(.up))
        tapCount = isPassthrough ? 0 : (2 * halfWidth + Self.lanes - 1) / Self.lanes * Self.lanes
        coefficients = isPassthrough ? [] : Self.designPhases(
            interpolation: interpolation, halfWidth: halfWidth, tapCount: tapCount,
            cutoff: cutoff, beta: config.kaiserBeta)
        history = []
        historyStart = 0
        nextBase = 0
        nextPhase = 0
        inputCount = 0
        reset()
    }

    /// Forgets all stream state so the resampler can start a new stream.
    public mutating func reset() {
        // Samples before the stream start are zeros: pre-fill the left half of the first window.
        history = [Float](repeating: 0, count: max(0, halfWidth - 1))
        historyStart = -(halfWidth - 1)
        nextBase = 0
        nextPhase = 0
        inputCount = 0
    }

    /// Number of output samples a stream of `inputCount` samples yields in total (after `flush()`).
    public func outputCount(forInputCount inputCount: Int) -> Int {
        // Outputs j with j·M/L < N.
        (inputCount * interpolation + decimation - 1) / decimation
    }

    /// Feeds the next chunk; returns every output sample whose filter window is now complete.
    public mutating func process(_ input: some Collection<Float>) -> [Float] {
        if isPassthrough { inputCount += input.count; return Array(input) }
        history.append(contentsOf: input)
        inputCount += input.count
        return drain(until: inputCount)
    }

    /// Ends the stream: emits the outputs still waiting for future samples (treated as zeros) and
    /// resets the state for a new stream.
    public mutating func flush() -> [Float] {
        if isPassthrough { reset(); return [] }
        history.append(contentsOf: repeatElement(0, count: tapCount))
        let out = drain(until: inputCount)
        reset()
        return out
    }

    /// Resamples a whole buffer in one call.
    public static func resample(_ buffer: AudioBuffer, config: ResamplerConfig = .default) throws -> AudioBuffer {
        var resampler = try StreamingResampler(inputRate: buffer.sampleRate, config: config)
        var out = resampler.process(buffer.samples)
        out.append(contentsOf: resampler.flush())
        return AudioBuffer(samples: out, sampleRate: config.outputRate)
    }

    /// Produces outputs whose time is before `limit` and whose window lies inside `history`.
    private mutating func drain(until limit: Int) -> [Float] {
        let historyEnd = historyStart + history.count
        var out: [Float] = []
        out.reserveCapacity(max(0, (historyEnd - nextBase) * interpolation / decimation + 1))
        let taps = tapCount
        let vectors = taps / Self.lanes
        history.withUnsafeBufferPointer { hist in
            coefficients.withUnsafeBufferPointer { coeffs in
                let histRaw = UnsafeRawPointer(hist.baseAddress!)
                let coeffRaw = UnsafeRawPointer(coeffs.baseAddress!)
                let stride = MemoryLayout<Float>.stride
                while nextBase < limit, nextBase - halfWidth + 1 + taps <= historyEnd {
                    let first = nextBase - halfWidth + 1 - historyStart
                    let phaseOffset = nextPhase * taps
                    var acc = SIMD8<Float>()
                    for v in 0 ..< vectors {
                        let x = histRaw.loadUnaligned(fromByteOffset: (first + v * Self.lanes) * stride,
                                                      as: SIMD8<Float>.self)
                        let c = coeffRaw.loadUnaligned(fromByteOffset: (phaseOffset + v * Self.lanes) * stride,
                                                       as: SIMD8<Float>.self)
                        acc += x * c
                    }
                    out.append(acc.sum())
                    nextPhase += decimation
                    nextBase += nextPhase / interpolation
                    nextPhase %= interpolation
                }
            }
        }
        // Keep only what future outputs can still reach.
        let keepFrom = min(max(0, nextBase - halfWidth + 1 - historyStart), history.count)
        if keepFrom > 0 {
            history.removeFirst(keepFrom)
            historyStart += keepFrom
        }
        return out
    }

    static let lanes = 8

    /// Builds the L phase filters. Phase p serves outputs at input time n0 + p/L and weights input
    /// sample n0 − halfWidth + 1 + i by kernel(τ) with τ = halfWidth − 1 − i + p/L.
    static func designPhases(interpolation: Int, halfWidth: Int, tapCount: Int,
                             cutoff: Double, beta: Double) -> [Float] {
        var table = [Float](repeating: 0, count: interpolation * tapCount)
        let i0Beta = besselI0(beta)
        var phaseTaps = [Double](repeating: 0, count: 2 * halfWidth)
        for phase in 0 ..< interpolation {
            let fraction = Double(phase) / Double(interpolation)
            var sum = 0.0
            for i in 0 ..< 2 * halfWidth {
                let tau = Double(halfWidth - 1 - i) + fraction
                let x = tau / Double(halfWidth)
                var value = 0.0
                if abs(x) < 1 {
                    let window = besselI0(beta * (1 - x * x).squareRoot()) / i0Beta
                    let arg = 2 * cutoff * tau
                    let sinc = arg == 0 ? 1 : sin(Double.pi * arg) / (Double.pi * arg)
                    value = 2 * cutoff * sinc * window
                }
                phaseTaps[i] = value
                sum += value
            }
            // Unit DC gain in every phase, so a constant input stays exactly constant.
            for i in 0 ..< 2 * halfWidth {
                table[phase * tapCount + i] = Float(phaseTaps[i] / sum)
            }
        }
        return table
    }

    /// Zeroth-order modified Bessel function of the first kind (power series).
    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0
        var term = 1.0
        let half = x / 2
        for k in 1 ..< 64 {
            term *= (half / Double(k)) * (half / Double(k))
            sum += term
            if term < sum * 1e-17 { break }
        }
        return sum
    }

    static func gcd(_ a: Int, _ b: Int) -> Int {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}
