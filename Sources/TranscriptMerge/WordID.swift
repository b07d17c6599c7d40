/// Identifies one ASR word: the `index`-th word of the ASR result `resultID`.
///
/// A result that is replaced (volatile → final) keeps its id, so word `i` of the new version has the same
/// `WordID` as word `i` of the old one; persistence updates that row instead of inserting a new one.
public struct WordID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var resultID: String
    public var index: Int

    public init(resultID: String, index: Int) {
        self.resultID = resultID
        self.index = index
    }

    public init(_ resultID: String, _ index: Int) {
        self.init(resultID: resultID, index: index)
    }

    public static func < (lhs: WordID, rhs: WordID) -> Bool {
        lhs.resultID != rhs.resultID ? lhs.resultID < rhs.resultID : lhs.index < rhs.index
    }

    public var description: String { "\(resultID)#\(index)" }
}
