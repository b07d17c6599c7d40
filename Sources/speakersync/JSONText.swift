import Foundation

/// What `--json` / `--format json` print: sorted keys, indented, slashes as they are (ids, URLs and
/// paths read the same as in the server's own answers).
enum JSONText {
    static func render(_ object: Any) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
