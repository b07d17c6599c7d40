import Foundation

/// |DFT|² of a real frame of even length N, bins 0…N/2, computed with one complex FFT of N/2 points
/// (even samples as real parts, odd samples as imaginary parts, then split into the two halves' spectra).
struct RealPowerSpectrum: Sendable {
    let frameLength: Int
    var binCount: Int { frameLength / 2 + 1 }
    private let half: MixedRadixFFT
    /// cos/sin of -2πk/N for k ≤ N/2: the twiddles that join the even and odd halves.
    private let joinReal: [Float]
    private let joinImaginary: [Float]

    init(frameLength: Int) {
        precondition(frameLength >= 2 && frameLength % 2 == 0, "the real FFT needs an even frame length")
        self.frameLength = frameLength
        half = MixedRadixFFT(size: frameLength / 2)
        let angles = (0 ... frameLength / 2).map { -2 * Double.pi * Double($0) / Double(frameLength) }
        joinReal = angles.map { Float(cos($0)) }
        joinImaginary = angles.map { Float(sin($0)) }
    }

    /// Scratch for `power`: 4 × N/2 floats.
    var scratchCount: Int { 2 * frameLength }

    /// Writes `binCount` powers of `frame` (N samples) into `power`.
    func power(
        of frame: UnsafePointer<Float>, into power: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>
    ) {
        let m = frameLength / 2
        let zr = scratch, zi = scratch + m, tr = scratch + 2 * m, ti = scratch + 3 * m
        for index in 0 ..< m {
            zr[index] = frame[2 * index]
            zi[index] = frame[2 * index + 1]
        }
        half.forward(real: zr, imaginary: zi, scratchReal: tr, scratchImaginary: ti)
        joinReal.withUnsafeBufferPointer { cosine in
            joinImaginary.withUnsafeBufferPointer { sine in
                for k in 0 ... m {
                    let a = k % m, b = (m - k) % m
                    // Even half E = (Z[k] + conj Z[m−k]) / 2, odd half O = (Z[k] − conj Z[m−k]) / 2i.
                    let evenR = 0.5 * (zr[a] + zr[b]), evenI = 0.5 * (zi[a] - zi[b])
                    let oddR = 0.5 * (zi[a] + zi[b]), oddI = -0.5 * (zr[a] - zr[b])
                    let real = evenR + cosine[k] * oddR - sine[k] * oddI
                    let imaginary = evenI + cosine[k] * oddI + sine[k] * oddR
                    power[k] = real * real + imaginary * imaginary
                }
            }
        }
    }
}
