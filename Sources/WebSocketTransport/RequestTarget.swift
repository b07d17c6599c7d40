/// A request line's target as libwebsockets 4.1.6 stored it, checked for what its parser does to a
/// target without saying so, before anything acts on the request.
///
/// lws percent-decodes the target while it reads it (lib/roles/http/parsers.c, `lws_parse_urldecode`)
/// and keeps nothing of the raw text, so its damage can only be told from what it stored:
/// - a CR or LF, raw or percent-decoded, ends the whole request line (`check_eol` in `lws_parse`):
///   the rest of the target (and the query after it) is skipped or read as a header, and the line's
///   HTTP version is never stored. `GET /a%0Ab/x` would be served as `GET /a`.
/// - a NUL right after `/` (or `/.`, `/..`) is stored but not counted in the fragment's length
///   (`issue_char` counts only non-NUL bytes): a path ending `/%00` would be served without it. A NUL
///   anywhere else makes lws drop the connection before any callback (nothing can answer that one).
/// - an unencoded `;` or `&` splits the path into fragments, as in a query; `lws_hdr_copy` then joins
///   them with `,`, and which of the two it was is lost.
/// The path and query pieces here are lws's decoded bytes, to be decoded no further.
struct RequestTarget: Equatable, Sendable {
    enum Problem: Equatable, Sendable {
        /// A NUL, CR or LF, raw or percent-encoded, in the path or the query (or, for a line without a
        /// stored version, one that ended the request line inside the target).
        case controlCharacter
        /// A literal `;` or `&` in the path, where lws split it.
        case splitPath
    }

    /// The decoded path (with a problem, only what lws kept of it).
    let path: [UInt8]
    /// The query's `name=value` pieces, decoded, as lws split them at `&` and `;` (empty ones kept).
    let queryPairs: [[UInt8]]
    let problem: Problem?

    /// - Parameters:
    ///   - pathFragments: the method token's fragments, byte for byte (more than one: lws split it).
    ///   - queryFragments: the query token's fragments; nil without a `?`.
    ///   - versionFragments: the HTTP version's; nil when lws stored none.
    ///   - storedAtVersion: the bytes lws's header buffer holds at `versionOffset` from the path's
    ///     start, as many as the version's first fragment and its NUL; nil when they could not be read.
    init(pathFragments: [[UInt8]], queryFragments: [[UInt8]]?, versionFragments: [[UInt8]]?, storedAtVersion: [UInt8]?) {
        path = pathFragments.first ?? []
        queryPairs = queryFragments ?? []
        let version = versionFragments?.first ?? []
        let fragments = pathFragments + (queryFragments ?? []) + [version]
        // The version is not where the counted lengths put it when lws stored a byte it did not count
        // (a NUL): everything after that byte sits one further. A non-empty version without NUL cannot
        // match one byte early, where the byte before it (a NUL ending the path or query) would be.
        if version.isEmpty || fragments.contains(where: { $0.contains(where: Self.isControl) })
            || storedAtVersion != version + [0] {
            problem = .controlCharacter
        } else if pathFragments.count > 1 {
            problem = .splitPath
        } else {
            problem = nil
        }
    }

    /// Where lws 4.1.6 stores the request line's HTTP version, counted from the path's first byte, when
    /// every byte it stored is counted in a fragment (parsers.c): each fragment ends with a NUL; after
    /// an unencoded `;` or `&` and after the `?` it skips one more byte (`offset = ++ah->pos`); the
    /// version begins right after the NUL that ends the target (the request line's space).
    static func versionOffset(pathFragments: [[UInt8]], queryFragments: [[UInt8]]?) -> Int {
        let fragments = pathFragments + (queryFragments ?? [])
        return fragments.reduce(0) { $0 + $1.count } + 2 * (fragments.count - 1) + 1
    }

    private static func isControl(_ byte: UInt8) -> Bool { byte == 0 || byte == 0x0A || byte == 0x0D }

    /// What the 400 `invalid_text` refusing the request says.
    var refusalMessage: String? {
        switch problem {
        case .controlCharacter?:
            return "the request target holds a NUL, CR or LF character (raw or percent-encoded), or the request line has no HTTP version; "
                + "it is refused rather than cut short"
        case .splitPath?:
            return "the path holds a literal ';' or '&', at which the server's HTTP parser splits it; percent-encode them (%3B, %26)"
        case nil:
            return nil
        }
    }
}
