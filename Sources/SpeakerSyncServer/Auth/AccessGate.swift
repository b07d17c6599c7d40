import Dispatch
import Foundation
import Synchronization
import WebSocketTransport

/// The server's access policy, shared by the HTTP routes and the WebSocket sessions: who a credential
/// is, how fast it may ask, and how many connections and sessions a device may hold. Memory-only, so
/// it can run inside the lws handshake on the service thread.
public final class AccessGate: Sendable {
    public let config: AccessConfig
    public let book: CredentialBook
    private let limiter: RateLimiter
    private let clock: @Sendable () -> Double
    private let deviceConnections = Mutex<[String: Int]>([:])
    private let deviceSessions = Mutex<[String: Int]>([:])

    /// - Parameter clock: monotonic seconds (tests step their own).
    public init(config: AccessConfig, book: CredentialBook,
                clock: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }) {
        self.config = config
        self.book = book
        self.limiter = RateLimiter(ratePerSecond: config.requestsPerSecond, burst: config.requestBurst)
        self.clock = clock
    }

    /// Everyone is admin when access control is off.
    static let open = Principal.admin(keyID: "open")

    // MARK: HTTP

    /// The principal of an HTTP request, or the 401 it gets.
    func principal(httpHeaders headers: [String: String]) -> Result<Principal, APIError> {
        guard config.mode == .required else { return .success(Self.open) }
        let presented: String?
        do { presented = try PresentedCredential.bearer(headers) } catch {
            return .failure(APIError(status: 401, code: "unauthorized", message: "the Authorization header must be 'Bearer <token>' (or Deepgram's 'Token <token>')"))
        }
        return authenticate(presented)
    }

    /// The transport's early check of an HTTP request (before its body is read): 401 without a valid
    /// credential, 429 over the rate. The route table asks it about every request but those of its
    /// open routes (the probes, the console's files).
    func admit(_ head: HTTPRequest) -> HTTPResponse? {
        switch principal(httpHeaders: head.headers) {
        case .failure(let error):
            return APIHandler.json(error.jsonObject, status: error.status, headers: [("www-authenticate", #"Bearer realm="speakersync""#)])
        case .success(let principal):
            guard let retryAfter = rateLimited(principal, address: head.remoteAddress) else { return nil }
            let error = rateLimitedError(retryAfter: retryAfter)
            return APIHandler.json(error.jsonObject, status: 429, headers: [("retry-after", "\(Self.retrySeconds(retryAfter))")])
        }
    }

    // MARK: WebSocket

    /// The principal of a WebSocket upgrade (header, subprotocol or query), or why it has none.
    func principal(upgrade request: UpgradeRequest) -> Result<Principal, APIError> {
        guard config.mode == .required else { return .success(Self.open) }
        let presented: String?
        do { presented = try PresentedCredential.upgrade(headers: request.headers, query: request.query) } catch {
            return .failure(APIError(status: 401, code: "unauthorized", message: "the Authorization header must be 'Bearer <token>' (or Deepgram's 'Token <token>')"))
        }
        return authenticate(presented)
    }

    /// The handshake's check: 401 without a valid credential, 429 over the rate or the device's
    /// connection limit. Refusals carry the HTTP API's codes and messages (the transport answers them
    /// as JSON), and a 429 says when to come back.
    func admit(upgrade request: UpgradeRequest) -> UpgradeAdmission {
        switch principal(upgrade: request) {
        case .failure(let error):
            return .refuse(status: error.status, code: error.code, message: error.message)
        case .success(let principal):
            return admit(principal, address: request.remoteAddress)
        }
    }

    /// The handshake's check of a session opened in this process for `principal` (a test recording,
    /// asked for by a request that presented its credential): no credential travels, but the
    /// credential must still be live, and the rate and the device's connection limit count as for
    /// an upgrade that presented it from `address`.
    func admit(inProcess principal: Principal, address: String?) -> UpgradeAdmission {
        guard config.mode != .required || book.holds(principal) else {
            return .refuse(status: 401, code: "unauthorized", message: "the credential is not valid (unknown, revoked or mistyped)")
        }
        return admit(principal, address: address)
    }

    /// What a valid credential's upgrade must still pass: the rate and the device's connection limit.
    private func admit(_ principal: Principal, address: String?) -> UpgradeAdmission {
        if let retryAfter = rateLimited(principal, address: address) {
            let error = rateLimitedError(retryAfter: retryAfter)
            return .refuse(status: error.status, code: error.code, message: error.message,
                           retryAfterSeconds: Self.retrySeconds(retryAfter))
        }
        if let device = principal.deviceID,
           deviceConnections.withLock({ $0[device, default: 0] }) >= config.maxConnectionsPerDevice {
            return .refuse(status: 429, code: "too_many_connections",
                           message: "the device already holds \(config.maxConnectionsPerDevice) WebSocket connections; close one or retry later",
                           retryAfterSeconds: Self.connectionLimitRetrySeconds)
        }
        return .accept
    }

    /// When a device at its connection limit should try again: a connection frees up whenever one
    /// of its sessions ends, which the server cannot foresee.
    static let connectionLimitRetrySeconds = 5

    func connectionOpened(_ principal: Principal) {
        guard let device = principal.deviceID else { return }
        deviceConnections.withLock { $0[device, default: 0] += 1 }
    }

    func connectionClosed(_ principal: Principal) {
        guard let device = principal.deviceID else { return }
        deviceConnections.withLock { counts in
            let left = counts[device, default: 0] - 1
            counts[device] = left > 0 ? left : nil
        }
    }

    /// Counts a session of `deviceID` starting; false (and nothing counted) at the device's limit.
    /// Counted per device whoever starts it (a device token or the admin streaming as that device).
    func sessionStarting(deviceID: String) -> Bool {
        deviceSessions.withLock { counts in
            guard counts[deviceID, default: 0] < config.maxSessionsPerDevice else { return false }
            counts[deviceID, default: 0] += 1
            return true
        }
    }

    func sessionEnded(deviceID: String) {
        deviceSessions.withLock { counts in
            let left = counts[deviceID, default: 0] - 1
            counts[deviceID] = left > 0 ? left : nil
        }
    }

    // MARK: Shared

    private func authenticate(_ presented: String?) -> Result<Principal, APIError> {
        switch book.authenticate(presented) {
        case .success(let principal):
            return .success(principal)
        case .failure(.missing):
            return .failure(APIError(status: 401, code: "unauthorized", message: "a device token or the admin key is required (Authorization: Bearer <token>)"))
        case .failure(.malformed), .failure(.unknown):
            return .failure(APIError(status: 401, code: "unauthorized", message: "the credential is not valid (unknown, revoked or mistyped)"))
        }
    }

    /// Seconds until the credential may ask again; nil when it may now.
    private func rateLimited(_ principal: Principal, address: String?) -> Double? {
        limiter.take(rateKey(principal, address: address), nowSeconds: clock())
    }

    /// The 429 of a request or upgrade over the rate, the same for both.
    private func rateLimitedError(retryAfter: Double) -> APIError {
        let who = config.mode == .off ? "from this address" : "with this credential"
        return APIError(status: 429, code: "rate_limited",
                        message: "more than \(Self.format(config.requestsPerSecond)) requests per second \(who); retry after \(Self.retrySeconds(retryAfter)) s")
    }

    /// `Retry-After` seconds: whole, and at least 1 (0 would invite an immediate retry).
    static func retrySeconds(_ seconds: Double) -> Int {
        max(1, Int(seconds.rounded(.up)))
    }

    /// What a rate limit counts: the credential; with `--auth off` everyone shares the one open
    /// "credential", so there the client's address is what tells callers apart.
    func rateKey(_ principal: Principal, address: String?) -> String {
        guard config.mode == .off else { return principal.credentialKey }
        return "address:\(address ?? "unknown")"
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
