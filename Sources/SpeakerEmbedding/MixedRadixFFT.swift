import Foundation

/// A forward complex FFT of any size, by Stockham autosort passes of radix 4, 2, 3, 5 and, for
/// leftover primes, a direct DFT of that prime's size. Exists because the encoder's STFT is 400
/// points (librosa's n_fft for 25 ms at 16 kHz): a power-of-two FFT with zero padding would sample a
/// different frequency grid than the one the mel filters and the weights were made for.
struct MixedRadixFFT: Sendable {
    struct Pass: Sendable {
        var radix: Int
        /// Size of the sub-transforms already combined before this pass.
        var span: Int
        /// cos/sin of -2π·r·j/(span·radix), indexed [j · radix + r] for j < span.
        var twiddleReal: [Float]
        var twiddleImaginary: [Float]
        /// cos/sin of -2π·q/radix, for the radix-point DFT.
        var rootReal: [Float]
        var rootImaginary: [Float]
    }

    let size: Int
    let passes: [Pass]

    init(size: Int) {
        precondition(size >= 1, "an FFT needs at least one point")
        self.size = size
        var factors: [Int] = []
        var rest = size
        for radix in [4, 2, 3, 5] {
            while rest % radix == 0 { factors.append(radix); rest /= radix }
        }
        var prime = 7
        while rest > 1 {
            while rest % prime == 0 { factors.append(prime); rest /= prime }
            prime += 2
        }
        var span = 1
        var passes: [Pass] = []
        for radix in factors {
            var twiddleReal = [Float](repeating: 0, count: span * radix)
            var twiddleImaginary = twiddleReal
            for j in 0 ..< span {
                for r in 0 ..< radix {
                    let angle = -2 * Double.pi * Double(r * j) / Double(span * radix)
                    twiddleReal[j * radix + r] = Float(cos(angle))
                    twiddleImaginary[j * radix + r] = Float(sin(angle))
                }
            }
            let roots = (0 ..< radix).map { -2 * Double.pi * Double($0) / Double(radix) }
            passes.append(Pass(
                radix: radix, span: span, twiddleReal: twiddleReal, twiddleImaginary: twiddleImaginary,
                rootReal: roots.map { Float(cos($0)) }, rootImaginary: roots.map { Float(sin($0)) }))
            span *= radix
        }
        self.passes = passes
    }

    /// Transforms `real`/`imaginary` (each `size` long) in place; `scratchReal`/`scratchImaginary` are
    /// `size` long too, and are overwritten.
    func forward(
        real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>,
        scratchReal: UnsafeMutablePointer<Float>, scratchImaginary: UnsafeMutablePointer<Float>
    ) {
        var sourceReal = real, sourceImaginary = imaginary
        var targetReal = scratchReal, targetImaginary = scratchImaginary
        for pass in passes {
            run(pass, sourceReal, sourceImaginary, targetReal, targetImaginary)
            swap(&sourceReal, &targetReal)
            swap(&sourceImaginary, &targetImaginary)
        }
        if sourceReal != real {
            real.update(from: sourceReal, count: size)
            imaginary.update(from: sourceImaginary, count: size)
        }
    }

    /// One Stockham pass: butterfly j = group·span + k reads points j + r·size/radix, twiddles them by
    /// its position k inside its sub-transform, takes a radix-point DFT and writes the results `span` apart.
    private func run(
        _ pass: Pass, _ inReal: UnsafeMutablePointer<Float>, _ inImaginary: UnsafeMutablePointer<Float>,
        _ outReal: UnsafeMutablePointer<Float>, _ outImaginary: UnsafeMutablePointer<Float>
    ) {
        let radix = pass.radix, span = pass.span, stride = size / radix
        pass.twiddleReal.withUnsafeBufferPointer { twiddleReal in
        pass.twiddleImaginary.withUnsafeBufferPointer { twiddleImaginary in
        pass.rootReal.withUnsafeBufferPointer { rootReal in
        pass.rootImaginary.withUnsafeBufferPointer { rootImaginary in
            withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * radix) { values in
                let vr = values.baseAddress!, vi = vr + radix
                for group in 0 ..< stride / span {
                    for k in 0 ..< span {
                        let j = group * span + k
                        for r in 0 ..< radix {
                            let xr = inReal[j + r * stride], xi = inImaginary[j + r * stride]
                            let wr = twiddleReal[k * radix + r], wi = twiddleImaginary[k * radix + r]
                            vr[r] = xr * wr - xi * wi
                            vi[r] = xr * wi + xi * wr
                        }
                        let o = group * span * radix + k
                        switch radix {
                        case 2:
                            outReal[o] = vr[0] + vr[1]
                            outImaginary[o] = vi[0] + vi[1]
                            outReal[o + span] = vr[0] - vr[1]
                            outImaginary[o + span] = vi[0] - vi[1]
                        case 4:
                            // X0 = a+b+c+d, X1 = a−ib−c+id, X2 = a−b+c−d, X3 = a+ib−c−id (b, c, d = v1, v2, v3).
                            let sumR = vr[0] + vr[2], sumI = vi[0] + vi[2]
                            let differenceR = vr[0] - vr[2], differenceI = vi[0] - vi[2]
                            let oddSumR = vr[1] + vr[3], oddSumI = vi[1] + vi[3]
                            let oddDifferenceR = vr[1] - vr[3], oddDifferenceI = vi[1] - vi[3]
                            outReal[o] = sumR + oddSumR
                            outImaginary[o] = sumI + oddSumI
                            outReal[o + span] = differenceR + oddDifferenceI
                            outImaginary[o + span] = differenceI - oddDifferenceR
                            outReal[o + 2 * span] = sumR - oddSumR
                            outImaginary[o + 2 * span] = sumI - oddSumI
                            outReal[o + 3 * span] = differenceR - oddDifferenceI
                            outImaginary[o + 3 * span] = differenceI + oddDifferenceR
                        case 3:
                            // X0 = a+t, X1,2 = a − t/2 ∓ i·(√3/2)(v1 − v2), t = v1 + v2.
                            let tR = vr[1] + vr[2], tI = vi[1] + vi[2]
                            let dR = (vr[1] - vr[2]) * -rootImaginary[1], dI = (vi[1] - vi[2]) * -rootImaginary[1]
                            let aR = vr[0] - 0.5 * tR, aI = vi[0] - 0.5 * tI
                            outReal[o] = vr[0] + tR
                            outImaginary[o] = vi[0] + tI
                            outReal[o + span] = aR + dI
                            outImaginary[o + span] = aI - dR
                            outReal[o + 2 * span] = aR - dI
                            outImaginary[o + 2 * span] = aI + dR
                        case 5:
                            // With w = e^(−2πi/5) = c1 − i·s1 and w² = c2 − i·s2:
                            // X1,4 = v0 + c1·t1 + c2·t2 ∓ i(s1·t3 + s2·t4), X2,3 = v0 + c2·t1 + c1·t2 ∓ i(s2·t3 − s1·t4),
                            // t1 = v1+v4, t2 = v2+v3, t3 = v1−v4, t4 = v2−v3.
                            let c1 = rootReal[1], c2 = rootReal[2], s1 = -rootImaginary[1], s2 = -rootImaginary[2]
                            let t1R = vr[1] + vr[4], t1I = vi[1] + vi[4], t2R = vr[2] + vr[3], t2I = vi[2] + vi[3]
                            let t3R = vr[1] - vr[4], t3I = vi[1] - vi[4], t4R = vr[2] - vr[3], t4I = vi[2] - vi[3]
                            let a1R = vr[0] + c1 * t1R + c2 * t2R, a1I = vi[0] + c1 * t1I + c2 * t2I
                            let a2R = vr[0] + c2 * t1R + c1 * t2R, a2I = vi[0] + c2 * t1I + c1 * t2I
                            let b1R = s1 * t3R + s2 * t4R, b1I = s1 * t3I + s2 * t4I
                            let b2R = s2 * t3R - s1 * t4R, b2I = s2 * t3I - s1 * t4I
                            outReal[o] = vr[0] + t1R + t2R
                            outImaginary[o] = vi[0] + t1I + t2I
                            outReal[o + span] = a1R + b1I
                            outImaginary[o + span] = a1I - b1R
                            outReal[o + 4 * span] = a1R - b1I
                            outImaginary[o + 4 * span] = a1I + b1R
                            outReal[o + 2 * span] = a2R + b2I
                            outImaginary[o + 2 * span] = a2I - b2R
                            outReal[o + 3 * span] = a2R - b2I
                            outImaginary[o + 3 * span] = a2I + b2R
                        default:
                            var root = 0
                            for q in 0 ..< radix {
                                var sumR: Float = 0, sumI: Float = 0
                                root = 0
                                for r in 0 ..< radix {
                                    sumR += vr[r] * rootReal[root] - vi[r] * rootImaginary[root]
                                    sumI += vr[r] * rootImaginary[root] + vi[r] * rootReal[root]
                                    root += q
                                    if root >= radix { root -= radix }
                                }
                                outReal[o + q * span] = sumR
                                outImaginary[o + q * span] = sumI
                            }
                        }
                    }
                }
            }
        }
        }
        }
        }
    }
}
