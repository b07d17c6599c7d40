import CSpeakerEmbeddingKernels

/// One LSTM layer's W_hhᵀ packed once for a path of the C recurrent kernel (speakersync_recurrent.h),
/// by default the fastest this CPU runs: half precision for AVX-512F or AVX2 (+F16C, FMA), float32
/// otherwise. The per-frame recurrent product is most of the encoder's time, and the
/// packed format is what makes each path fast (docs/embeddings.md gives speed and effect on accuracy).
struct RecurrentKernel: Sendable {
    /// A `speakersync_recurrent_path` value.
    let path: Int32
    let hiddenSize: Int
    let width: Int
    /// UInt32 storage keeps the packed weights 4-byte aligned, as the C side requires.
    private let packed: [UInt32]

    /// Packs `weights` ([hiddenSize × width], row-major) for `path`, which must be supported on this CPU.
    init(weights: [Float], hiddenSize: Int, width: Int, path: Int32 = speakersync_recurrent_best_path()) {
        precondition(weights.count == hiddenSize * width && width % 64 == 0)
        precondition(speakersync_recurrent_path_supported(path) == 1, "recurrent path \(path) is not supported on this CPU")
        self.path = path
        self.hiddenSize = hiddenSize
        self.width = width
        let bytes = speakersync_recurrent_packed_size(path, Int32(hiddenSize), Int32(width))
        var packed = [UInt32](repeating: 0, count: bytes / 4)
        packed.withUnsafeMutableBytes { speakersync_recurrent_pack(path, weights, Int32(hiddenSize), Int32(width), $0.baseAddress!) }
        self.packed = packed
    }

    /// The path's name, for logs and benchmark output ("avx512-f16", …).
    var pathName: String { String(cString: speakersync_recurrent_path_name(path)) }

    /// gates[b][j] += Σ_k hidden[b][k] · W[k][j] for `batch` rows (hidden: batch × hiddenSize, gates: batch × width).
    @inline(__always)
    func accumulate(hidden: UnsafePointer<Float>, batch: Int, into gates: UnsafeMutablePointer<Float>) {
        packed.withUnsafeBytes { packed in
            speakersync_recurrent_accumulate(path, hidden, Int32(batch), Int32(hiddenSize), packed.baseAddress!, Int32(width), gates)
        }
    }
}
