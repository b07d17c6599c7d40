/// Where a client puts its credential. HTTP: `Authorization: Bearer <credential>`. WebSocket upgrade:
/// the same header; or, for browsers (which cannot set headers on a WebSocket),
/// `Sec-WebSocket-Protocol: token, <credential>` (the form Deepgram uses; the server answers with the
/// `token` subprotocol) or the `token` query parameter (it ends up in proxy and access logs: the last
/// resort, see docs/security.md).
enum PresentedCredential {
    /// The WebSocket subprotocol name that announces a credential as the next offered "protocol".
    static let subprotocol = "token"

    enum Failure: Error, Equatable {
        /// An Authorization header that is not `Bearer <credential>`.
        case unsupportedScheme
    }

    /// The Bearer credential of `headers` (lower-case names); nil when there is no Authorization header.
    static func bearer(_ headers: [String: String]) throws(Failure) -> String? {
        guard let value = headers["authorization"] else { return nil }
        let trimmed = value.drop(while: { $0 == " " })
        guard trimmed.count > 7, trimmed.prefix(7).lowercased() == "bearer " else { throw .unsupportedScheme }
        let credential = trimmed.dropFirst(7).trimmingSpaces
        return credential.isEmpty ? nil : credential
    }

    /// The credential of a WebSocket upgrade, from the header, the subprotocol list or the query.
    static func upgrade(headers: [String: String], query: [String: String]) throws(Failure) -> String? {
        if let bearer = try bearer(headers) { return bearer }
        if let offered = headers["sec-websocket-protocol"] {
            let names = offered.split(separator: ",").map { Substring($0).trimmingSpaces }
            if let index = names.firstIndex(of: subprotocol), index + 1 < names.count { return names[index + 1] }
        }
        if let token = query["token"], !token.isEmpty { return token }
        return nil
    }
}

private extension Substring {
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
