/// The encoder's parameters in the layout the forward pass multiplies with: PyTorch's [out × in]
/// matrices transposed to [in × out] (columns in gate order i, f, g, o), and each layer's two bias
/// vectors already summed.
struct GE2EWeights: Sendable {
    struct LSTMLayer: Sendable {
        /// W_ihᵀ: [inputSize × 4·hidden], row-major.
        var inputWeights: [Float]
        /// W_hhᵀ ([hidden × 4·hidden]) packed for the recurrent kernel's fastest path on this CPU.
        let recurrent: RecurrentKernel
        /// b_ih + b_hh, [4·hidden]: PyTorch adds both to every gate pre-activation.
        var bias: [Float]
        var inputSize: Int

        init(inputWeights: [Float], recurrentWeights: [Float], bias: [Float], inputSize: Int) {
            self.inputWeights = inputWeights
            recurrent = RecurrentKernel(weights: recurrentWeights, hiddenSize: GE2EWeights.hiddenSize, width: 4 * GE2EWeights.hiddenSize)
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
