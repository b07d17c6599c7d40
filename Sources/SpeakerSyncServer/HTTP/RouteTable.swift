import WebSocketTransport

/// The HTTP routes served beside the WebSocket on the same port: each declared once, with its method,
/// path pattern, metrics name, who may call it, and its handler. Every capability registers its own
/// (`PeopleRoutes.register(in:…)` and so on; `RouteTable.api` gathers them); `APIHandler` matches a
/// request here and runs it through the middleware (credentials, rate limits, scope, metrics).
struct RouteTable: Sendable {
    private(set) var routes: [Route] = []

    /// Declares a route. `pattern` is a path of literal segments and `{parameter}` segments, e.g.
    /// `/v1/conversations/{id}/transcript`; `name` labels its metrics (stable, no ids). `inline`: the
    /// requests answered at once on the transport's thread, from memory, before the body and the
    /// text checks (the probes); every other request is answered on a worker.
    mutating func add(_ method: RouteMethod, _ pattern: String, name: String, access: RouteAccess,
                      inline: (@Sendable (HTTPRequest) -> Bool)? = nil, handler: @escaping RouteHandler) {
        declare(method, pattern, name: name, access: access, inline: inline, answer: { context, reply in
            reply(Result { try handler(context) })
        })
    }

    /// Declares a route whose handler answers later, from a callback: a running session answering
    /// on its own queue, so the worker that took the request hands it over instead of waiting.
    /// A handler that throws answers with the error at once.
    mutating func addAnsweringLater(_ method: RouteMethod, _ pattern: String, name: String, access: RouteAccess,
                                    handler: @escaping DeferredRouteHandler) {
        declare(method, pattern, name: name, access: access, inline: nil, answer: { context, reply in
            do {
                try handler(context, reply)
            } catch {
                reply(.failure(error))
            }
        })
    }

    private mutating func declare(_ method: RouteMethod, _ pattern: String, name: String, access: RouteAccess,
                                  inline: (@Sendable (HTTPRequest) -> Bool)?, answer: @escaping RouteAnswer) {
        let pattern = RoutePattern(pattern)
        for parameter in access.parameters {
            precondition(pattern.parameters.contains(parameter), "\(pattern) has no {\(parameter.rawValue)} for its access check")
        }
        precondition(inline == nil || access == .open, "only open routes answer inline: \(pattern)")
        routes.append(Route(method: method, pattern: pattern, name: name, access: access, answersInline: inline ?? { _ in false },
                            answer: answer))
    }

    /// The route of a request line: unknown paths are 404 and known paths with another method 405
    /// (naming the methods the path takes); GET routes answer HEAD too.
    func match(method: String, path: String) -> Result<MatchedRoute, APIError> {
        // The transport hands over the path decoded once (by libwebsockets); decoding it again would
        // turn an id's `%41` into `A` and its `%2F` into another segment.
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        // An id holding NUL would reach PostgreSQL, which cannot hold it (the transport refuses one
        // in the target already; this keeps the table safe on its own).
        if parts.contains(where: { $0.utf8.contains(0) }) {
            return .failure(APIError(status: 400, code: "invalid_text", message: "the path is not UTF-8 text without NUL characters; text that PostgreSQL cannot store is refused"))
        }
        var allowed: Set<RouteMethod> = []
        for route in routes {
            guard let parameters = route.pattern.match(parts) else { continue }
            if route.method.answers(method) { return .success(MatchedRoute(route: route, parameters: parameters)) }
            allowed.insert(route.method)
        }
        guard !allowed.isEmpty else {
            return .failure(APIError(status: 404, code: "not_found", message: "no route for \(path)"))
        }
        let methods = RouteMethod.allCases.filter(allowed.contains).map(\.rawValue)
        // GET routes answer HEAD too, so `Allow` names it.
        let allow = methods.contains("GET") ? methods + ["HEAD"] : methods
        return .failure(APIError(status: 405, code: "method_not_allowed",
                                 message: "\(method) is not allowed on \(path); use \(methods.joined(separator: " or "))",
                                 allowedMethods: allow))
    }

    /// Whether the transport may read a request's body without a credential: the path as sent is an
    /// open route's pattern, or lies under the fixed start of one with parameters (`/console/…`).
    /// The path's text decides, not its match: `/console/a/b` is let through to its 404, and
    /// `//healthz` is not an open path.
    func isOpen(path: String) -> Bool {
        routes.contains { $0.access == .open && $0.pattern.opens(path) }
    }
}

/// One declared route.
struct Route: Sendable {
    let method: RouteMethod
    let pattern: RoutePattern
    /// The `route` label of `speakersync_http_requests_total`.
    let name: String
    let access: RouteAccess
    let answersInline: @Sendable (HTTPRequest) -> Bool
    /// Runs the handler and gives its response or error to the reply, at once or later.
    let answer: RouteAnswer
}

typealias RouteHandler = @Sendable (RouteContext) throws -> HTTPResponse
/// What the middleware and a handler that answers later give their answer to: a response, or the
/// error `ErrorMiddleware` renders.
typealias RouteReply = @Sendable (Result<HTTPResponse, any Error>) -> Void
typealias DeferredRouteHandler = @Sendable (RouteContext, @escaping RouteReply) throws -> Void
typealias RouteAnswer = @Sendable (RouteContext, @escaping RouteReply) -> Void

struct MatchedRoute: Sendable {
    let route: Route
    let parameters: PathParameters
}

/// The methods routes are declared with.
enum RouteMethod: String, CaseIterable, Sendable {
    case get = "GET", post = "POST", put = "PUT", delete = "DELETE"

    /// A GET route answers HEAD as well.
    func answers(_ method: String) -> Bool {
        method == rawValue || (self == .get && method == "HEAD")
    }
}

/// Who may call a route. Everything but `.open` needs a valid credential (401 otherwise, and 429 over
/// the rate), checked before the body is read and again before the handler runs; the rest is
/// checked on the worker, before the handler.
enum RouteAccess: Sendable, Equatable {
    /// Anyone, without a credential (the console's files, the probes); one that is presented and valid
    /// is identified all the same (`/healthz` says more to the admin).
    case open
    /// A device token or the admin key; the handler scopes what it reads to the token's device.
    case credential
    /// The admin key only; a device token gets 403 `admin_required` with this message.
    case admin(refusal: String)
    /// A device token only for the device the parameter names (403 `device_mismatch` otherwise).
    case device(PathParameter)
    /// The conversation the parameter names, visible to the credential: another device's answers
    /// 404 `conversation_not_found` exactly like a missing one. The handler gets it as `context.conversation`.
    case conversation(PathParameter)

    var parameters: [PathParameter] {
        switch self {
        case .device(let parameter), .conversation(let parameter): [parameter]
        case .open, .credential, .admin: []
        }
    }
}

/// The names a path pattern's `{parameter}` segments may have.
enum PathParameter: String, CaseIterable, Sendable {
    case id
    case conversationID = "conversation_id"
    case deviceID = "device_id"
    case tokenID = "token_id"
    case label
    case name
    case file
}

/// A path's parameters, by name, as decoded by the transport (once).
struct PathParameters: Sendable, Equatable {
    private(set) var values: [PathParameter: String] = [:]

    init(_ values: [PathParameter: String] = [:]) {
        self.values = values
    }

    subscript(_ name: PathParameter) -> String? { values[name] }

    /// The parameter's value; a route asking for one its pattern lacks is a bug (500).
    func require(_ name: PathParameter) throws(APIError) -> String {
        guard let value = values[name] else {
            throw .internalError
        }
        return value
    }
}

/// `/v1/conversations/{id}/transcript`: literal segments and named parameters, each one whole segment.
struct RoutePattern: Sendable, Equatable, CustomStringConvertible {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(PathParameter)
    }

    let text: String
    let segments: [Segment]

    init(_ text: String) {
        precondition(text.hasPrefix("/"), "a route pattern starts with '/': \(text)")
        self.text = text
        segments = text.split(separator: "/").map { part in
            guard part.hasPrefix("{") else {
                precondition(!part.contains("{") && !part.contains("}"), "a parameter is a whole segment: \(text)")
                return .literal(String(part))
            }
            guard part.hasSuffix("}"), let name = PathParameter(rawValue: String(part.dropFirst().dropLast())) else {
                preconditionFailure("\(part) in \(text) is not a PathParameter")
            }
            return .parameter(name)
        }
        precondition(Set(parameters).count == parameters.count, "a parameter appears once: \(text)")
    }

    var description: String { text }

    var parameters: [PathParameter] {
        segments.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    /// The parameters of a path (already split into decoded segments), or nil when it is another route's.
    func match(_ parts: [String]) -> PathParameters? {
        guard parts.count == segments.count else { return nil }
        var values: [PathParameter: String] = [:]
        for (segment, part) in zip(segments, parts) {
            switch segment {
            case .literal(let literal): guard literal == part else { return nil }
            case .parameter(let name): values[name] = part
            }
        }
        return PathParameters(values)
    }

    /// Whether some path matches both patterns.
    func overlaps(_ other: RoutePattern) -> Bool {
        segments.count == other.segments.count && zip(segments, other.segments).allSatisfy { mine, theirs in
            guard case .literal(let a) = mine, case .literal(let b) = theirs else { return true }
            return a == b
        }
    }

    /// The path as sent is this pattern, or (for a pattern with parameters) starts with its text before the first one.
    func opens(_ path: String) -> Bool {
        guard let brace = text.firstIndex(of: "{") else { return path == text }
        return path.hasPrefix(text[..<brace])
    }
}

/// What a capability's routes need, on a server that may lack it (tests run servers without some
/// services): there its routes answer 404 `not_found` saying what the server does not do.
struct Capability<Value: Sendable>: Sendable {
    let value: Value?
    /// "this server keeps no people".
    let absent: String

    init(_ value: Value?, absent: String) {
        self.value = value
        self.absent = absent
    }

    func get() throws(APIError) -> Value {
        guard let value else { throw APIError(status: 404, code: "not_found", message: absent) }
        return value
    }
}
