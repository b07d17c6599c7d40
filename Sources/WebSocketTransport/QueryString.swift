/// Query-string decoding shared by WebSocket upgrades and HTTP requests.
enum QueryString {
    /// Parameters from raw bytes (lws's already-decoded `name=value` pieces, split at a literal `&`
    /// or `;`; empty pieces are skipped), keeping apart the names whose name or value is not text
    /// that can be stored: bytes that are not UTF-8, or NUL.
    /// Those are left out of `values` and listed in `invalidText` (their names decoded leniently),
    /// so the application can refuse them by name instead of seeing a silently repaired string.
    static func parse(bytePairs: [[UInt8]]) -> (values: [String: String], invalidText: [String]) {
        var values: [String: String] = [:]
        var invalid: [String] = []
        for pair in bytePairs where !pair.isEmpty {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let nameBytes = equals.map { pair[..<$0] } ?? pair[...]
            let valueBytes = equals.map { pair[pair.index(after: $0)...] } ?? []
            guard let name = storableText(nameBytes), let value = storableText(valueBytes) else {
                invalid.append(String(decoding: nameBytes.filter { $0 != 0 }, as: UTF8.self))
                continue
            }
            values[name] = value
        }
        return (values, invalid)
    }

    /// The bytes as a String when they are UTF-8 without NUL (what PostgreSQL text can hold).
    static func storableText(_ bytes: some Collection<UInt8>) -> String? {
        guard !bytes.contains(0) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Parses `name=value` pairs already split on `&`. A pair without `=` maps to "". Later duplicates win.
    /// - Parameter decode: percent-decode (and `+` → space). Pass false for pairs that lws already
    ///   decoded (`WSI_TOKEN_HTTP_URI_ARGS` fragments are decoded and split on literal `&` only), so
    ///   `%2541` stays `%41` instead of being decoded twice.
    static func parse<S: Sequence>(pairs: S, decode: Bool) -> [String: String] where S.Element == String {
        let transform: (Substring) -> String = decode ? { percentDecode($0) } : { String($0) }
        var result: [String: String] = [:]
        for pair in pairs where !pair.isEmpty {
            if let equals = pair.firstIndex(of: "=") {
                result[transform(pair[..<equals])] = transform(pair[pair.index(after: equals)...])
            } else {
                result[transform(pair[...])] = ""
            }
        }
        return result
    }

    /// Parses a raw query string such as `a=1&b=x%20y`.
    static func parse(_ query: String) -> [String: String] {
        parse(pairs: query.split(separator: "&", omittingEmptySubsequences: true).map(String.init), decode: true)
    }

    /// Decodes `%XX` escapes (invalid escapes are kept literally) and `+` as space; the result is
    /// interpreted as UTF-8 with replacement characters for invalid sequences.
    static func percentDecode(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
               let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2]) {
                bytes.append(high << 4 | low)
                index += 3
            } else if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
                index += 1
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
