import CSpeakerEmbeddingKernels

/// resemblyzer's VoiceEncoder.forward for a batch of equally long mel windows: a 3-layer LSTM
/// (40 → 256 → 256 → 256) run from zero state, the last layer's final hidden state through
/// Linear(256 → 256) and ReLU, then L2-normalised.
///
/// Work is laid out time-major (row t·batch + b): per layer, one matrix product per window projects
/// its frames through W_ih (per window so that a batch rounds each window as it is rounded alone),
/// and each time step is one [batch × 256] · W_hhᵀ product added onto that step's slice of the
/// projection.
///
/// The per-step products are small (a few windows × 256 × 1024) and dominate the cost. OpenBLAS
/// repacks its operands on every such call, so they run through a small C kernel instead
/// (`RecurrentKernel`: weights packed once in the CPU's fastest format, accumulators in vector
/// registers; docs/embeddings.md). The one big product per layer (every frame through W_ih) stays
/// with OpenBLAS.
struct GE2ENetwork: Sendable {
    let weights: GE2EWeights

    /// Embeddings of `batch` windows of `frameCount` frames; `mels` holds window b's frames at
    /// [b·frameCount·40 ...] (frame-major, as `MelSpectrogram.values`). Returns [batch × 256].
    func embed(mels: UnsafeBufferPointer<Float>, batch: Int, frameCount: Int) -> [Float] {
        let hidden = GE2EWeights.hiddenSize, gateWidth = 4 * hidden, channels = GE2EWeights.melChannelCount
        let rows = frameCount * batch
        var layerInput = [Float](repeating: 0, count: rows * channels)
        for b in 0 ..< batch {
            for t in 0 ..< frameCount {
                let source = (b * frameCount + t) * channels, target = (t * batch + b) * channels
                for c in 0 ..< channels { layerInput[target + c] = mels[source + c] }
            }
        }
        var gates = [Float](repeating: 0, count: rows * gateWidth)
        var layerOutput = [Float](repeating: 0, count: rows * hidden)
        var cell = [Float](repeating: 0, count: batch * hidden)
        for layer in weights.layers {
            let inputSize = layer.inputSize
            for index in cell.indices { cell[index] = 0 }
            layer.bias.withUnsafeBufferPointer { bias in
                gates.withUnsafeMutableBufferPointer { gates in
                    for row in 0 ..< rows { (gates.baseAddress! + row * gateWidth).update(from: bias.baseAddress!, count: gateWidth) }
                }
            }
            layerInput.withUnsafeBufferPointer { input in
                layer.inputWeights.withUnsafeBufferPointer { inputWeights in
                    gates.withUnsafeMutableBufferPointer { gates in
                        // One product per window (its rows t·batch + b, read and written through the
                        // leading dimensions), not one for the whole batch: OpenBLAS's Haswell sgemm
                        // rounds a row differently depending on how many rows the call has, so a window
                        // embedded in a batch got other last bits than alone (SpeakerKitBatchedPushTests
                        // failed on a machine with OPENBLAS_CORETYPE=Haswell). Per window, every call has
                        // the window's frame count of rows however many sessions share the batch.
                        for b in 0 ..< batch {
                            BLAS.multiply(
                                input.baseAddress! + b * inputSize, rows: frameCount, inner: inputSize, leadingA: batch * inputSize,
                                inputWeights.baseAddress!, columns: gateWidth, leadingB: gateWidth,
                                into: gates.baseAddress! + b * gateWidth, leadingC: batch * gateWidth, beta: 1)
                        }
                    }
                }
            }
            gates.withUnsafeMutableBufferPointer { gates in
                layerOutput.withUnsafeMutableBufferPointer { output in
                    cell.withUnsafeMutableBufferPointer { cell in
                        for t in 0 ..< frameCount {
                            let stepGates = gates.baseAddress! + t * batch * gateWidth
                            let stepOutput = output.baseAddress! + t * batch * hidden
                            if t > 0 {
                                layer.recurrent.accumulate(hidden: stepOutput - batch * hidden, batch: batch, into: stepGates)
                            }
                            speakersync_lstm_cell_update(
                                layer.recurrent.path, stepGates, cell.baseAddress!, stepOutput, Int32(hidden), Int32(batch))
                        }
                    }
                }
            }
            swap(&layerInput, &layerOutput)
            if layerOutput.count != rows * hidden { layerOutput = [Float](repeating: 0, count: rows * hidden) }
        }
        // After the swap, layerInput holds the last layer's outputs; its final step is the last hidden state.
        let size = GE2EWeights.embeddingSize
        var embeddings = [Float](repeating: 0, count: batch * size)
        for b in 0 ..< batch {
            for index in 0 ..< size { embeddings[b * size + index] = weights.projectionBias[index] }
        }
        layerInput.withUnsafeBufferPointer { outputs in
            weights.projectionWeights.withUnsafeBufferPointer { projection in
                embeddings.withUnsafeMutableBufferPointer { embeddings in
                    // Per window too, for the same reason: a one-row product is a one-row product.
                    for b in 0 ..< batch {
                        BLAS.multiply(
                            outputs.baseAddress! + (frameCount - 1) * batch * hidden + b * hidden, rows: 1, inner: hidden, leadingA: hidden,
                            projection.baseAddress!, columns: size, leadingB: size,
                            into: embeddings.baseAddress! + b * size, leadingC: size, beta: 1)
                    }
                }
            }
        }
        for b in 0 ..< batch {
            var norm: Float = 0
            for index in 0 ..< size {
                let value = max(0, embeddings[b * size + index])
                embeddings[b * size + index] = value
                norm += value * value
            }
            norm = norm.squareRoot()
            // An all-zero ReLU output has no direction; it stays zero rather than becoming NaN.
            if norm > 0 { for index in 0 ..< size { embeddings[b * size + index] /= norm } }
        }
        return embeddings
    }
}
