/// Levenshtein alignment of two word sequences (unit costs), the first step of WDER.
///
/// Two rows of costs plus a backtrace of 2 bits per cell: a 10 000 × 10 000-word meeting needs 25 MB.
struct WordAlignment {
    enum Step: UInt8 { case diagonal = 0, deletion = 1, insertion = 2 }

    /// Index pairs (reference, hypothesis) in order; nil on one side marks a deletion or an insertion.
    let pairs: [(reference: Int?, hypothesis: Int?)]

    /// Ties prefer a substitution, then a deletion, then an insertion, so equal-cost alignments keep
    /// as many words paired as possible.
    init(reference: [Int], hypothesis: [Int]) {
        let n = reference.count
        let m = hypothesis.count
        let width = m + 1
        var trace = PackedSteps(count: (n + 1) * width)
        for j in 1..<width { trace[j] = .insertion }
        var previous = (0...m).map { Int32($0) }
        var current = [Int32](repeating: 0, count: width)
        for i in stride(from: 1, through: n, by: 1) {
            trace[i * width] = .deletion
            let word = reference[i - 1]
            let rowStart = i * width
            // The inner loop runs n·m times: unchecked buffers keep a 10 000-word meeting near a second.
            previous.withUnsafeBufferPointer { above in
                current.withUnsafeMutableBufferPointer { row in
                    hypothesis.withUnsafeBufferPointer { words in
                        row[0] = Int32(i)
                        for j in stride(from: 1, through: m, by: 1) {
                            let diagonal = above[j - 1] + (word == words[j - 1] ? 0 : 1)
                            let deletion = above[j] + 1
                            let insertion = row[j - 1] + 1
                            if diagonal <= deletion, diagonal <= insertion {
                                row[j] = diagonal
                                trace.set(rowStart + j, .diagonal)
                            } else if deletion <= insertion {
                                row[j] = deletion
                                trace.set(rowStart + j, .deletion)
                            } else {
                                row[j] = insertion
                                trace.set(rowStart + j, .insertion)
                            }
                        }
                    }
                }
            }
            swap(&previous, &current)
        }
        var reversed: [(Int?, Int?)] = []
        reversed.reserveCapacity(n + m)
        var i = n
        var j = m
        while i > 0 || j > 0 {
            switch i == 0 ? .insertion : (j == 0 ? .deletion : trace[i * width + j]) {
            case .diagonal:
                reversed.append((i - 1, j - 1))
                i -= 1
                j -= 1
            case .deletion:
                reversed.append((i - 1, nil))
                i -= 1
            case .insertion:
                reversed.append((nil, j - 1))
                j -= 1
            }
        }
        pairs = reversed.reversed()
    }

    /// Words compared as WDER tools compare them: case-insensitive, with the punctuation ASR systems
    /// attach (`, . ? ! " '` and `-`, `_`) removed unless nothing would be left.
    static func normalized(_ text: String) -> String {
        let lowered = text.lowercased()
        let stripped = lowered.filter { !",.?!\"'-_".contains($0) }
        return stripped.isEmpty ? lowered : stripped
    }
}

/// Alignment steps, four to a byte; cells start as `.diagonal` (0).
private struct PackedSteps {
    private var bytes: [UInt8]

    init(count: Int) { bytes = [UInt8](repeating: 0, count: (count + 3) / 4) }

    /// Sets a cell that is still `.diagonal`, the only case the row sweep needs.
    mutating func set(_ index: Int, _ step: WordAlignment.Step) {
        guard step != .diagonal else { return }
        bytes.withUnsafeMutableBufferPointer { $0[index >> 2] |= step.rawValue << UInt8((index & 3) * 2) }
    }

    subscript(index: Int) -> WordAlignment.Step {
        get { WordAlignment.Step(rawValue: (bytes[index >> 2] >> UInt8((index & 3) * 2)) & 3) ?? .diagonal }
        set {
            let shift = UInt8((index & 3) * 2)
            bytes[index >> 2] = (bytes[index >> 2] & ~(3 << shift)) | (newValue.rawValue << shift)
        }
    }
}
