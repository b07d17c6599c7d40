/// Something kept in an array sorted by (start, end, tie) on the audio timeline: words and turns.
///
/// Times are sanitized before they enter the merger (finite, end ≥ start), so `<` is a total order here.
protocol TimelineOrdered {
    associatedtype Tie: Comparable
    var timelineStart: Double { get }
    var timelineEnd: Double { get }
    var timelineTie: Tie { get }
}

extension TimelineOrdered {
    func precedes(start: Double, end: Double, tie: Tie) -> Bool {
        if timelineStart != start { return timelineStart < start }
        if timelineEnd != end { return timelineEnd < end }
        return timelineTie < tie
    }

    func precedes(_ other: Self) -> Bool {
        precedes(start: other.timelineStart, end: other.timelineEnd, tie: other.timelineTie)
    }
}

extension LabelledWord: TimelineOrdered {
    var timelineStart: Double { startSeconds }
    var timelineEnd: Double { endSeconds }
    var timelineTie: WordID { id }
}

extension SpeakerTurn: TimelineOrdered {
    var timelineStart: Double { startSeconds }
    var timelineEnd: Double { endSeconds }
    var timelineTie: String { id }
}

/// Sorted-array operations. Binary searches are O(log n). Inserting and removing touch only the suffix
/// after the first affected position, so arrivals at the end of the timeline (the live case) cost
/// O(k log k + suffix) and a batch into an empty array costs O(k log k); an edit near the beginning of a
/// long transcript pays one memmove of the suffix.
extension Array where Element: TimelineOrdered {
    /// Index of the first element not ordered before (start, end, tie).
    func lowerBound(start: Double, end: Double, tie: Element.Tie) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid].precedes(start: start, end: end, tie: tie) { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Index of the first element whose start is ≥ `seconds`.
    func firstIndex(startingAtOrAfter seconds: Double) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid].timelineStart < seconds { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Index of the first element whose start is > `seconds`.
    func firstIndex(startingAfter seconds: Double) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if self[mid].timelineStart <= seconds { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Removes the elements at `indices` (ascending, unique), compacting only from the first of them.
    mutating func removeSorted(at indices: [Int]) {
        guard let first = indices.first else { return }
        var write = first
        var next = 0
        for read in first..<count {
            if next < indices.count && indices[next] == read {
                next += 1
                continue
            }
            if write != read { swapAt(write, read) }
            write += 1
        }
        removeLast(count - write)
    }

    /// Merges `items` (sorted, no key equal to an existing one) in, rewriting only the suffix they land in.
    /// Returns the final positions of the inserted items, ascending.
    @discardableResult
    mutating func insertSorted(_ items: [Element]) -> [Int] {
        guard let first = items.first else { return [] }
        let from = lowerBound(start: first.timelineStart, end: first.timelineEnd, tie: first.timelineTie)
        if from == count {
            append(contentsOf: items)
            return [Int](from..<count)
        }
        var positions: [Int] = []
        positions.reserveCapacity(items.count)
        let suffix = Array(self[from...])
        removeSubrange(from...)
        reserveCapacity(count + suffix.count + items.count)
        var a = 0
        var b = 0
        while a < suffix.count && b < items.count {
            if items[b].precedes(suffix[a]) {
                positions.append(count)
                append(items[b]); b += 1
            } else {
                append(suffix[a]); a += 1
            }
        }
        append(contentsOf: suffix[a...])
        positions.append(contentsOf: count..<(count + items.count - b))
        append(contentsOf: items[b...])
        return positions
    }
}

/// Makes times usable as sort keys without trusting the caller (validation belongs to the protocol layer):
/// a non-finite start becomes 0, a non-finite end becomes the start, and an end before the start is raised to it.
func sanitizedSpan(start: Double, end: Double) -> (start: Double, end: Double) {
    let start = start.isFinite ? start : 0
    let end = end.isFinite ? max(start, end) : start
    return (start, end)
}

/// Non-finite confidences become nil, so that equality (and so change detection) stays meaningful.
func sanitizedConfidence(_ value: Double?) -> Double? {
    guard let value, value.isFinite else { return nil }
    return value
}
