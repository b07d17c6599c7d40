import CSpeakerEmbeddingKernels
import Foundation
import Testing

/// The elementwise LSTM update in C (speakersync_cell.h): on every instruction-set path this CPU runs,
/// it must give PyTorch's cell update as libm computes it in double precision, to float32 accuracy,
/// including gate sums far outside the range where sigmoid and tanh saturate.
@Suite struct LSTMCellKernelTests {
    @Test(arguments: [1, 2, 3])
    func updatesLikeDoublePrecisionOnEverySupportedPath(batch: Int) {
        let hidden = 256
        var random = RecurrentKernelTests.LCG(state: 77 &+ UInt64(batch))
        // Pre-activations mostly in [-8, 8], with a few beyond exp's float32 range.
        var gates = (0 ..< batch * 4 * hidden).map { _ in random.next() * 8 }
        gates[3] = 200
        gates[hidden + 5] = -200
        gates[2 * hidden + 7] = 95
        let cell = (0 ..< batch * hidden).map { _ in random.next() * 3 }
        let supported = RecurrentKernelTests.allPaths.filter { speakersync_recurrent_path_supported($0) == 1 }
        #expect(!supported.isEmpty)
        for path in supported {
            var outGates = gates, outCell = cell
            var outHidden = [Float](repeating: .nan, count: batch * hidden)
            speakersync_lstm_cell_update(path, &outGates, &outCell, &outHidden, Int32(hidden), Int32(batch))
            var worst = 0.0
            for b in 0 ..< batch {
                for unit in 0 ..< hidden {
                    let base = b * 4 * hidden
                    func sigmoid(_ x: Float) -> Double { 1 / (1 + Foundation.exp(-Double(x))) }
                    let i = sigmoid(gates[base + unit]), f = sigmoid(gates[base + hidden + unit])
                    let g = Foundation.tanh(Double(gates[base + 2 * hidden + unit])), o = sigmoid(gates[base + 3 * hidden + unit])
                    let c = f * Double(cell[b * hidden + unit]) + i * g
                    let h = o * Foundation.tanh(c)
                    worst = max(worst, abs(Double(outCell[b * hidden + unit]) - c), abs(Double(outHidden[b * hidden + unit]) - h))
                }
            }
            print("LSTM cell path \(String(cString: speakersync_recurrent_path_name(path))), batch \(batch): worst error \(worst)")
            // |c| stays under 4 here; float32 carries about 7 digits of it.
            #expect(worst < 2e-6, "path \(path)")
        }
    }
}
