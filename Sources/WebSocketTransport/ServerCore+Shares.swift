/// The per-client shares of the server's connections (`ConnectionShares`): refusals and the
/// bookkeeping of requests in flight. Service thread only.
extension ServerCore {
    static func addressFullMessage(_ limit: Int) -> String {
        "this address already holds \(limit) connections to the server; close some, or retry later"
    }

    /// The HTTP answer of a `connectionRefusal` (the server's limit or the address's share).
    static func refusal(_ refusal: (status: Int, code: String, message: String, retryAfter: Int)) -> HTTPResponse {
        HTTPResponse.json(
            status: refusal.status, #"{"error":{"code":"\#(refusal.code)","message":"\#(refusal.message)"}}"#,
            headers: [("retry-after", "\(refusal.retryAfter)")])
    }

    /// An admitted request counts against its credential's requests in flight until its answer is
    /// written (`requestLeftFlight`); one past the cap is refused at once, before its body is read.
    func inFlightRefusal(_ request: HTTPRequest) -> HTTPResponse? {
        guard let credential = request.headers["authorization"], !credential.isEmpty else { return nil }
        if shares.credentialIsFull(credential) {
            let limit = config.maxRequestsInFlightPerCredential
            return .json(status: 429,
                         #"{"error":{"code":"too_many_requests_in_flight","message":"this credential already has \#(limit) requests in flight; wait for their answers"}}"#,
                         headers: [("retry-after", "1")])
        }
        return nil
    }

    /// Counts the connection's current request against its credential (after it was admitted).
    func requestEnteredFlight(_ connection: ServerConnection, request: HTTPRequest) {
        guard connection.inFlightCredential == nil, let credential = request.headers["authorization"], !credential.isEmpty else { return }
        shares.requestStarted(with: credential)
        connection.inFlightCredential = credential
    }

    func requestLeftFlight(_ connection: ServerConnection) {
        guard let credential = connection.inFlightCredential else { return }
        shares.requestEnded(with: credential)
        connection.inFlightCredential = nil
    }
}
