// QueryString, the reader of every upgrade URL's and HTTP request's query.
//
// Input: the query's `name=value` pieces, split on `&`, as lws hands them over (already decoded).
//
// Properties: every accepted name and value is text PostgreSQL can store (UTF-8, no NUL); every
// non-empty piece is either accepted or named as invalid; and for the percent-decoding reader,
// percent-encoding the accepted values and parsing them again gives the same parameters.
@testable import WebSocketTransport

/// Percent-encodes every byte that is not unreserved (RFC 3986 §2.3).
func percentEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            out.unicodeScalars.append(Unicode.Scalar(byte))
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            out += "%" + (hex.count == 1 ? "0" : "") + hex
        }
    }
    return out
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let pieces = bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).map(Array.init)
    let (values, invalid) = QueryString.parse(bytePairs: pieces)
    for (name, value) in values {
        guard !name.unicodeScalars.contains("\0"), !value.unicodeScalars.contains("\0") else { fatalError("accepted a NUL") }
    }
    let nonEmpty = pieces.filter { !$0.isEmpty }.count
    guard values.count + invalid.count <= nonEmpty, nonEmpty == 0 || values.count + invalid.count >= 1 else {
        fatalError("\(nonEmpty) pieces gave \(values.count) values and \(invalid.count) refusals")
    }

    // The raw query string reader (HTTP requests): any text, then its own values re-encoded.
    let raw = QueryString.parse(String(decoding: bytes, as: UTF8.self))
    let encoded = raw.map { "\(percentEncoded($0.key))=\(percentEncoded($0.value))" }.joined(separator: "&")
    let again = QueryString.parse(encoded)
    guard again == raw else { fatalError("re-encoded query \(encoded) parsed to \(again), not \(raw)") }
    return 0
}
