import Foundation

/// A `multipart/form-data` body (RFC 7578) as a browser's `FormData` or `curl -F` sends it: the way
/// a test recording's uploaded WAV travels with its RTTM and its settings in one request.
///
/// Only what a form needs is read: each part's `Content-Disposition` name and file name and its
/// `Content-Type`; the parts' bytes are slices of the body (no copy). Every malformed body is a 400
/// naming what is wrong; nothing in it is trusted to be well formed.
struct MultipartForm: Sendable {
    struct Part: Sendable {
        var name: String
        var fileName: String?
        var contentType: String?
        var body: ArraySlice<UInt8>
    }

    var parts: [Part]

    /// More parts than any form of ours has: a body of thousands of tiny parts is refused, not parsed.
    static let maxParts = 32
    /// A part's header block (a browser's is under 300 bytes).
    static let maxHeaderBytes = 8 * 1024

    func parts(named name: String) -> [Part] { parts.filter { $0.name == name } }

    /// The boundary of a `multipart/form-data` content type; nil for any other type.
    static func boundary(contentType: String) -> String? {
        let pieces = Self.parameters(contentType)
        guard pieces.first?.value.lowercased() == "multipart/form-data" else { return nil }
        return pieces.dropFirst().first { $0.key.lowercased() == "boundary" }?.value
    }

    static func parse(_ body: [UInt8], boundary: String) throws(APIError) -> MultipartForm {
        // RFC 2046: 1–70 characters; anything longer is not a boundary a client made.
        guard (1...70).contains(boundary.utf8.count) else { throw invalid("the multipart boundary must be 1 to 70 characters") }
        let delimiter = Array("--\(boundary)".utf8)
        // The first delimiter may follow a preamble; every later one follows CRLF.
        guard var cursor = Self.find(delimiter, in: body, from: 0) else {
            throw invalid("the body holds no part (no line with the boundary of its content type)")
        }
        let separator = Array("\r\n".utf8) + delimiter
        var parts: [Part] = []
        while true {
            cursor += delimiter.count
            if Self.hasPrefix(Array("--".utf8), in: body, at: cursor) { break } // the closing delimiter
            // Transport padding (spaces, tabs) may follow a delimiter before its CRLF.
            while cursor < body.count, body[cursor] == 0x20 || body[cursor] == 0x09 { cursor += 1 }
            guard Self.hasPrefix(Array("\r\n".utf8), in: body, at: cursor) else {
                throw invalid("a boundary line is not followed by CRLF (or the body ends without its closing boundary)")
            }
            cursor += 2
            guard parts.count < maxParts else { throw invalid("the form has more than \(maxParts) parts") }
            guard let headerEnd = Self.find(Array("\r\n\r\n".utf8), in: body, from: cursor, limit: maxHeaderBytes) else {
                throw invalid("part \(parts.count + 1)'s headers do not end (a blank line) within \(maxHeaderBytes) bytes")
            }
            let headers = try Self.headers(body[cursor ..< headerEnd], part: parts.count + 1)
            let contentStart = headerEnd + 4
            guard let contentEnd = Self.find(separator, in: body, from: contentStart) else {
                throw invalid("part \(parts.count + 1) does not end with the boundary")
            }
            parts.append(Part(name: headers.name, fileName: headers.fileName, contentType: headers.contentType,
                              body: body[contentStart ..< contentEnd]))
            cursor = contentEnd + 2
        }
        return MultipartForm(parts: parts)
    }

    /// A part's name, file name and type from its header lines.
    private static func headers(_ block: ArraySlice<UInt8>, part: Int) throws(APIError) -> (name: String, fileName: String?, contentType: String?) {
        guard let text = String(validating: block, as: UTF8.self), !text.contains("\0") else {
            throw invalid("part \(part)'s headers are not UTF-8 text")
        }
        var name: String?
        var fileName: String?
        var contentType: String?
        for line in text.split(separator: "\r\n", omittingEmptySubsequences: true) {
            guard let colon = line.firstIndex(of: ":") else { throw invalid("part \(part) has a header line without a colon") }
            let field = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = String(line[line.index(after: colon)...])
            switch field {
            case "content-disposition":
                let parameters = Self.parameters(value)
                guard parameters.first?.value.lowercased() == "form-data" else {
                    throw invalid("part \(part)'s Content-Disposition is not form-data")
                }
                for parameter in parameters.dropFirst() {
                    switch parameter.key.lowercased() {
                    case "name": name = parameter.value
                    case "filename": fileName = parameter.value
                    default: break
                    }
                }
            case "content-type": contentType = value.trimmingCharacters(in: .whitespaces)
            default: break
            }
        }
        guard let name, !name.isEmpty else { throw invalid("part \(part) has no name (Content-Disposition: form-data; name=\"…\")") }
        return (name, fileName, contentType)
    }

    /// `value; key=token; key="quoted \" string"` as [("", value), (key, value), …]: the first
    /// element's key is empty.
    static func parameters(_ header: String) -> [(key: String, value: String)] {
        var result: [(key: String, value: String)] = []
        var characters = Substring(header)
        func skipSpaces() { while characters.first == " " || characters.first == "\t" { characters.removeFirst() } }
        skipSpaces()
        let head = characters.prefix { $0 != ";" }
        result.append(("", head.trimmingCharacters(in: .whitespaces)))
        characters = characters.dropFirst(head.count)
        while characters.first == ";" {
            characters.removeFirst()
            skipSpaces()
            let key = characters.prefix { $0 != "=" && $0 != ";" }
            characters = characters.dropFirst(key.count)
            var value = ""
            if characters.first == "=" {
                characters.removeFirst()
                skipSpaces()
                if characters.first == "\"" {
                    characters.removeFirst()
                    while let next = characters.first, next != "\"" {
                        characters.removeFirst()
                        if next == "\\", let escaped = characters.first {
                            value.append(escaped)
                            characters.removeFirst()
                        } else {
                            value.append(next)
                        }
                    }
                    if characters.first == "\"" { characters.removeFirst() }
                    characters = characters.drop { $0 != ";" }
                } else {
                    let token = characters.prefix { $0 != ";" }
                    value = token.trimmingCharacters(in: .whitespaces)
                    characters = characters.dropFirst(token.count)
                }
            }
            result.append((key.trimmingCharacters(in: .whitespaces), value))
        }
        return result
    }

    /// The first index at or after `start` where `needle` begins (within `limit` bytes of `start` when
    /// given). The first byte is scanned for, then the rest compared: a boundary's first bytes are
    /// rare in audio, so this stays linear in practice.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int, limit: Int? = nil) -> Int? {
        guard let first = needle.first, start >= 0 else { return nil }
        let end = min(haystack.count, limit.map { start + $0 + needle.count } ?? haystack.count)
        var index = start
        while index + needle.count <= end {
            if haystack[index] == first, hasPrefix(needle, in: haystack, at: index) { return index }
            index += 1
        }
        return nil
    }

    static func hasPrefix(_ prefix: [UInt8], in bytes: [UInt8], at index: Int) -> Bool {
        guard index >= 0, index + prefix.count <= bytes.count else { return false }
        for offset in prefix.indices where bytes[index + offset] != prefix[offset] { return false }
        return true
    }

    private static func invalid(_ message: String) -> APIError {
        APIError(status: 400, code: "invalid_body", message: "the multipart/form-data body is malformed: \(message)")
    }
}
