/// Where a client puts its credential. HTTP: `Authorization: Bearer <credential>`. WebSocket upgrade:
/// the same header; or, for browsers (which cannot set headers on a WebSocket),
/// `Sec-WebSocket-Protocol: token, <credential>` (the form Deepgram uses; the server answers with the
/// `token` subprotocol) or the `token` query parameter (it ends up in proxy and access logs: the last
/// resort, see docs/security.md).
enum PresentedCredential {
    /// The WebSocket subprotocol name that announces a credential as the next offered "protocol".
    static let subprotocol = "token"

    enum Failure: Error, Equatable {
        /// An Authorization header that is neither `Bearer <credential>` nor `Token <credential>`.
        case unsupportedScheme
    }

    /// The Bearer (or Token) credential of `headers` (lower-case names); nil when there is no Authorization header.
    static func bearer(_ headers: [String: String]) throws(Failure) -> String? {
        guard let value = headers["authorization"] else { return nil }
        // On UTF-8 bytes: this runs for every request, and Character-level trimming costs more than the
        // SHA-256 of the check itself.
        let bytes = Array(value.utf8)
        var start = bytes.startIndex
        while start < bytes.endIndex, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        // `Token` is Deepgram's name for the same thing (its SDKs send `Authorization: Token <key>`).
        guard let scheme = [Array("bearer ".utf8), Array("token ".utf8)].first(where: { scheme in
            bytes.count - start > scheme.count && zip(bytes[start...], scheme).allSatisfy({ $0 | 0x20 == $1 })
        }) else { throw .unsupportedScheme }
        let credential = Self.trimmed(bytes[(start + scheme.count)...])
        return credential.isEmpty ? nil : credential
    }

    /// The bytes without leading and trailing spaces and tabs, as a String.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> String {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice.removeFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice.removeLast() }
        return String(decoding: slice, as: UTF8.self)
    }

    /// The credential of a WebSocket upgrade, from the header, the subprotocol list or the query.
    static func upgrade(headers: [String: String], query: [String: String]) throws(Failure) -> String? {
        if let bearer = try bearer(headers) { return bearer }
        if let offered = headers["sec-websocket-protocol"] {
            let names = offered.utf8.split(separator: UInt8(ascii: ",")).map { trimmed(ArraySlice($0)) }
            if let index = names.firstIndex(of: subprotocol), index + 1 < names.count { return names[index + 1] }
        }
        if let token = query["token"], !token.isEmpty { return token }
        return nil
    }
}
