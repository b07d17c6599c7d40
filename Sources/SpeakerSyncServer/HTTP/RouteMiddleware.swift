import Logging
import WebSocketTransport

/// A request on its way through the middleware to its route's handler, which gets it too (in the
/// manner of Hummingbird's request context): what the middleware found out travels with it.
struct RouteContext: Sendable {
    let request: HTTPRequest
    /// The route and its parameters, or the 400/404/405 the path gets.
    let match: Result<MatchedRoute, APIError>
    /// The id the response and the log carry (none during admission: a refusal there carries none).
    let requestID: String?
    /// Who calls, once `CredentialMiddleware` has looked; nil on an open route without a valid credential.
    var caller: Principal? = nil
    /// The conversation of a `.conversation` route, once `ScopeMiddleware` has found it visible.
    var scopedConversation: ConversationSummary? = nil

    init(request: HTTPRequest, match: Result<MatchedRoute, APIError>, requestID: String?) {
        self.request = request
        self.match = match
        self.requestID = requestID
    }

    /// The `route` label of the request's metrics.
    var routeName: String { (try? match.get())?.route.name ?? "unmatched" }

    /// The route, or the error the path gets.
    func route() throws(APIError) -> MatchedRoute { try match.get() }

    /// A parameter of the route's pattern, by name.
    func parameter(_ name: PathParameter) throws(APIError) -> String {
        try route().parameters.require(name)
    }

    /// The caller of a route that needs a credential (`CredentialMiddleware` has checked it).
    var principal: Principal {
        get throws(APIError) {
            guard let caller else { throw APIError.internalError }
            return caller
        }
    }

    /// The conversation of a `.conversation` route (`ScopeMiddleware` has checked that the caller sees it).
    var conversation: ConversationSummary {
        get throws(APIError) {
            guard let scopedConversation else { throw APIError.internalError }
            return scopedConversation
        }
    }
}

/// The middleware after this one and the handler, in continuation-passing style: the answer comes
/// to the reply, at once or later (a handler that answers from a session's callback).
typealias RouteNext = (RouteContext, @escaping RouteReply) -> Void

/// A step the route table applies to every request, around the handler (in the manner of
/// Hummingbird's `RouterMiddleware`); `APIHandler` chains them in order, the first outermost.
protocol RouteMiddleware: Sendable {
    /// Before the body is read, on the transport's thread (memory only, never blocking): a response
    /// refuses the request at once and its body is never read. `next` asks the middleware after this one.
    func admit(_ head: RouteContext, next: (RouteContext) -> HTTPResponse?) -> HTTPResponse?
    /// With the body, on a worker: around the middleware after this one and the handler. The answer
    /// goes to `reply` exactly once; an error refuses the request without asking `next`.
    func handle(_ context: RouteContext, next: RouteNext, reply: @escaping RouteReply)
    /// Whether it wraps a route's inline answers too (the probes, answered on the transport's thread;
    /// the middleware that do not wrap them are skipped).
    var wrapsInlineAnswers: Bool { get }
}

extension RouteMiddleware {
    func admit(_ head: RouteContext, next: (RouteContext) -> HTTPResponse?) -> HTTPResponse? { next(head) }
    func handle(_ context: RouteContext, next: RouteNext, reply: @escaping RouteReply) { next(context, reply) }
    var wrapsInlineAnswers: Bool { false }
}

/// Counts every answer in `speakersync_http_requests_total` by route name and status: refusals
/// before the body, probes answered inline, and handled requests ("unmatched" for no route).
struct MetricsMiddleware: RouteMiddleware {
    let metrics: ServerMetrics
    var wrapsInlineAnswers: Bool { true }

    func admit(_ head: RouteContext, next: (RouteContext) -> HTTPResponse?) -> HTTPResponse? {
        let refusal = next(head)
        if let refusal { count(head, status: refusal.status) }
        return refusal
    }

    func handle(_ context: RouteContext, next: RouteNext, reply: @escaping RouteReply) {
        next(context) { [self] result in
            if case .success(let response) = result { count(context, status: response.status) }
            reply(result)
        }
    }

    private func count(_ context: RouteContext, status: Int) {
        metrics.increment("speakersync_http_requests_total", ["route": context.routeName, "status": String(status)])
    }
}

/// Turns what the middleware after it and the handler throw into the JSON error body, with the
/// request's id: an `APIError` as it is (401 with `WWW-Authenticate`), anything else as 503
/// `database_unavailable` or 500 `internal_error`, whose detail goes to the log only.
struct ErrorMiddleware: RouteMiddleware {
    let logger: Logger
    var wrapsInlineAnswers: Bool { true }

    func handle(_ context: RouteContext, next: RouteNext, reply: @escaping RouteReply) {
        next(context) { [self] result in
            reply(.success(response(result, context)))
        }
    }

    private func response(_ result: Result<HTTPResponse, any Error>, _ context: RouteContext) -> HTTPResponse {
        let requestID = context.requestID ?? ""
        switch result {
        case .success(let response):
            return response
        case .failure(let error as APIError):
            var headers: [(String, String)] = error.status == 401 ? [("www-authenticate", #"Bearer realm="speakersync""#)] : []
            if !error.allowedMethods.isEmpty { headers.append(("allow", error.allowedMethods.joined(separator: ", "))) }
            return APIHandler.json(error.jsonObject(requestID: requestID), status: error.status, headers: headers)
        case .failure(let error):
            // The detail (SQL state, connection text, socket paths) goes to the log under the
            // request id; the client gets a stable code and the id to quote.
            let failure = APIHandler.unexpected(error)
            logger.error("HTTP request failed", metadata: ["path": "\(Redaction.path(context.request.path))", "request_id": "\(requestID)",
                                                           "error": "\(error)"])
            return APIHandler.json(failure.jsonObject(requestID: requestID), status: failure.status,
                                   headers: failure.status == 503 ? [("retry-after", "2")] : [])
        }
    }
}

/// Text that cannot be stored, anywhere in the request (query, path, a JSON or RTTM body): 400
/// `invalid_text` naming where, before the route is looked at.
struct TextMiddleware: RouteMiddleware {
    func handle(_ context: RouteContext, next: RouteNext, reply: @escaping RouteReply) {
        do {
            try APIHandler.refuseInvalidText(context.request)
        } catch {
            return reply(.failure(error))
        }
        next(context, reply)
    }
}

/// Who calls, and how fast: every route but the open ones needs a device token or the admin key
/// (401), checked with the rate limit (429) before the body is read, and checked again before the
/// handler (a revocation may have come between). Here the path's 400/404/405 surfaces too.
struct CredentialMiddleware: RouteMiddleware {
    let gate: AccessGate
    /// The table whose open routes need no credential.
    let table: RouteTable

    func admit(_ head: RouteContext, next: (RouteContext) -> HTTPResponse?) -> HTTPResponse? {
        if table.isOpen(path: head.request.path) { return next(head) }
        return gate.admit(head.request) ?? next(head)
    }

    func handle(_ context: RouteContext, next: RouteNext, reply: @escaping RouteReply) {
        var context = context
        do {
            let route = try context.route().route
            if route.access == .open {
                context.caller = try? gate.principal(httpHeaders: context.request.headers).get()
            } else {
                context.caller = try gate.principal(httpHeaders: context.request.headers).get()
            }
        } catch {
            return reply(.failure(error))
        }
        next(context, reply)
    }
}

/// What a credential may reach on a route: the admin's routes (403 `admin_required`), a device's
/// own (403 `device_mismatch`), a conversation it sees (404 `conversation_not_found`, exactly as a
/// missing one). Reads PostgreSQL for conversations: workers only.
struct ScopeMiddleware: RouteMiddleware {
    let reader: any ConversationReader

    func handle(_ context: RouteContext, next: RouteNext, reply: @escaping RouteReply) {
        do {
            next(try scoped(context), reply)
        } catch {
            reply(.failure(error))
        }
    }

    private func scoped(_ context: RouteContext) throws -> RouteContext {
        var context = context
        switch try context.route().route.access {
        case .open, .credential:
            break
        case .admin(let refusal):
            guard try context.principal.isAdmin else { throw APIError(status: 403, code: "admin_required", message: refusal) }
        case .device(let parameter):
            _ = try APIHandler.scopedDevice(try context.principal, requested: try context.parameter(parameter))
        case .conversation(let parameter):
            context.scopedConversation = try Self.visibleConversation(try context.parameter(parameter), as: try context.principal, reader: reader)
        }
        return context
    }

    /// A conversation the principal may see; another device's answers exactly like a missing one.
    static func visibleConversation(_ id: String, as principal: Principal, reader: any ConversationReader) throws -> ConversationSummary {
        guard let summary = try reader.conversation(id: id),
              principal.deviceID == nil || principal.deviceID == summary.deviceID else { throw APIHandler.notFound(id) }
        return summary
    }
}
