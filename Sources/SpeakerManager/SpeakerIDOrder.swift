/// The order of speaker ids in every sorted answer and in tie-breaks: numeric ids by value ("2" before
/// "10", where plain string order would put "10" first), then the others in string order. A total order,
/// so results never depend on dictionary iteration order.
enum SpeakerIDOrder {
    static func areInIncreasingOrder(_ a: String, _ b: String) -> Bool {
        switch (Int(a), Int(b)) {
        case let (x?, y?): x != y ? x < y : a < b
        case (_?, nil): true
        case (nil, _?): false
        case (nil, nil): a < b
        }
    }

    static func sorted(_ ids: some Sequence<String>) -> [String] {
        ids.sorted(by: areInIncreasingOrder)
    }
}
