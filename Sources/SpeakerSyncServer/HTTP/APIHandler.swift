import Dispatch
import Foundation
import Logging
import PostgresClient
import SpeakerSyncStore
import WebSocketTransport

/// Serves the routes of `RouteTable.api` through the middleware. The lws service thread hands each
/// request over; the work (PostgreSQL reads, rendering) runs on a worker queue and the response goes
/// back through `respond`.
final class APIHandler: HTTPHandler, Sendable {
    private let table: RouteTable
    /// Applied in order, the first outermost: every answer is counted (errors rendered inside that),
    /// text is checked before the route is looked at, the credential before the scope.
    private let middleware: [any RouteMiddleware]
    private let workers = DispatchQueue(label: "speakersync.http", attributes: .concurrent)
    static let maxPageSize = 200

    /// `services`: what the routes read and change; `gate`: who may do what; `metrics`: the counters
    /// every request adds to.
    init(services: APIServices, gate: AccessGate, metrics: ServerMetrics = ServerMetrics(), logger: Logger) {
        table = RouteTable.api(services: services, gate: gate, metrics: metrics, logger: logger)
        middleware = [MetricsMiddleware(metrics: metrics), ErrorMiddleware(logger: logger), TextMiddleware(),
                      CredentialMiddleware(gate: gate, table: table), ScopeMiddleware(reader: services.reader)]
    }

    /// Credentials and rate limits, checked by the transport before a body is read.
    func admit(_ head: HTTPRequest) -> HTTPResponse? {
        let context = RouteContext(request: head, match: table.match(method: head.method, path: head.path), requestID: nil)
        let read: (RouteContext) -> HTTPResponse? = { _ in nil }
        return middleware.reversed().reduce(read) { next, step in { step.admit($0, next: next) } }(context)
    }

    func handle(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let requestID = RequestID.make()
        let respond: @Sendable (HTTPResponse) -> Void = { response in
            var response = response
            response.headers.append(("x-request-id", requestID))
            respond(response)
        }
        let context = RouteContext(request: request, match: table.match(method: request.method, path: request.path), requestID: requestID)
        // Probes answer here, on the service thread, from memory: within a second whatever
        // PostgreSQL or the worker threads are doing. A credential's details wait for a worker.
        if case .success(let matched) = context.match, matched.route.answersInline(request) {
            // Every inline answer is synchronous: the reply runs before `run` returns.
            Self.run(context, through: middleware.filter(\.wrapsInlineAnswers), reply: respond)
            return
        }
        workers.async { [middleware] in
            Self.run(context, through: middleware, reply: respond)
        }
    }

    /// The middleware around the route's handler; `reply` gets the response, at once or later.
    private static func run(_ context: RouteContext, through middleware: [any RouteMiddleware],
                            reply: @escaping @Sendable (HTTPResponse) -> Void) {
        let handler: RouteNext = { context, answered in
            do {
                try context.route().route.answer(context, answered)
            } catch {
                answered(.failure(error))
            }
        }
        let chain = middleware.reversed().reduce(handler) { next, step in { step.handle($0, next: next, reply: $1) } }
        chain(context) { result in
            switch result {
            case .success(let response): reply(response)
            // `ErrorMiddleware` answers every error; this is only the last resort without it.
            case .failure: reply(json(APIError.internalError.jsonObject(requestID: context.requestID ?? ""), status: 500))
            }
        }
    }

    /// An error no route turned into an `APIError`: the database being unavailable, or a bug.
    static func unexpected(_ error: any Error) -> APIError {
        if error is PGError || error is StoreError {
            return APIError(status: 503, code: "database_unavailable", message: "the database is unavailable; retry shortly")
        }
        return .internalError
    }

    /// Text that cannot be stored, anywhere in the request (query, path, a JSON or RTTM body): 400
    /// `invalid_text` naming where, before any route sees it.
    static func refuseInvalidText(_ request: HTTPRequest) throws(APIError) {
        if let name = request.invalidTextParameters.sorted().first {
            let place = name == "path" ? "the path" : "query parameter \"\(name)\""
            throw APIError(status: 400, code: "invalid_text", message: "\(place) is not UTF-8 text without NUL characters; text that PostgreSQL cannot store is refused")
        }
        guard !request.body.isEmpty, let kind = BodyText.kind(request) else { return }
        if let problem = BodyText.problem(request.body, kind: kind) {
            throw APIError(status: 400, code: "invalid_text", message: "the body \(problem); text that PostgreSQL cannot store is refused")
        }
    }

    /// The device a request may act on: a device token's own (a different `device_id` parameter is
    /// refused), or for the admin the `device_id` parameter (nil when absent: every device).
    static func scopedDevice(_ principal: Principal, requested: String?) throws -> String? {
        guard let own = principal.deviceID else { return requested.flatMap { $0.isEmpty ? nil : $0 } }
        if let requested, !requested.isEmpty, requested != own {
            throw APIError(status: 403, code: "device_mismatch", message: "this token acts only as device '\(own)'")
        }
        return own
    }

    static func notFound(_ id: String) -> APIError {
        APIError(status: 404, code: "conversation_not_found", message: "no conversation with id '\(id)'")
    }

    static func json(_ object: [String: Any], status: Int = 200, headers: [(String, String)] = []) -> HTTPResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return HTTPResponse(status: status, contentType: "application/json", headers: headers, body: Array(data))
    }
}
