/// The encoder's parameters in the layout the forward pass multiplies with: PyTorch's [out × in]
/// matrices transposed to [in × out] (columns in gate order i, f, g, o), and each layer's two bias
/// vectors already summed.
struct GE2EWeights: Sendable {
    struct LSTMLayer: Sendable {
        /// W_ihᵀ: [inputSize × 4·hidden], row-major.
        var inputWeights: [Float]
        /// W_hhᵀ: [hidden × 4·hidden], row-major.
        let recurrentWeights: [Float]
        /// W_hhᵀ as IEEE half-precision bit patterns, for the vector kernels: the per-frame recurrent
        /// product is bound by reading these weights from cache, and half the bytes is nearly half
        /// the time (docs/embeddings.md gives the effect on accuracy).
        let recurrentWeightsHalf: [UInt16]
        /// b_ih + b_hh, [4·hidden]: PyTorch adds both to every gate pre-activation.
        var bias: [Float]
        var inputSize: Int

        init(inputWeights: [Float], recurrentWeights: [Float], bias: [Float], inputSize: Int) {
            self.inputWeights = inputWeights
            self.recurrentWeights = recurrentWeights
            recurrentWeightsHalf = recurrentWeights.map { Float16($0).bitPattern }
            self.bias = bias
            self.inputSize = inputSize
        }
    }

    static let melChannelCount = 40
    static let hiddenSize = 256
    static let layerCount = 3
    static let embeddingSize = 256

    var layers: [LSTMLayer]
    /// The linear layer's weightᵀ: [hidden × embedding], row-major.
    var projectionWeights: [Float]
    var projectionBias: [Float]

    /// Every tensor the file must hold, with the shape PyTorch gave it.
    static let expectedShapes: [(name: String, shape: [Int])] = {
        var shapes: [(String, [Int])] = []
        for layer in 0 ..< layerCount {
            shapes.append(("lstm.weight_ih_l\(layer)", [4 * hiddenSize, layer == 0 ? melChannelCount : hiddenSize]))
            shapes.append(("lstm.weight_hh_l\(layer)", [4 * hiddenSize, hiddenSize]))
            shapes.append(("lstm.bias_ih_l\(layer)", [4 * hiddenSize]))
            shapes.append(("lstm.bias_hh_l\(layer)", [4 * hiddenSize]))
        }
        shapes.append(("linear.weight", [embeddingSize, hiddenSize]))
        shapes.append(("linear.bias", [embeddingSize]))
        return shapes
    }()
}
