import Synchronization

/// The credentials a server accepts, in memory, so that checking one never waits on PostgreSQL: the
/// WebSocket upgrade is checked inside the lws handshake, on the service thread, which must not block.
///
/// PostgreSQL is the source of truth (`device_tokens`, `admin_keys`); `replace` installs a fresh read
/// of it (at start, after every change this server makes, and every `refreshSeconds`, which is how a
/// change made by another server sharing the database arrives), and reports which principals lost
/// their credential so their open sessions can be closed.
public final class CredentialBook: Sendable {
    public struct Entry: Sendable, Equatable {
        public var id: String
        public var kind: Credential.Kind
        /// The device of a device token; nil for admin keys.
        public var deviceID: String?
        public var digest: String

        public init(id: String, kind: Credential.Kind, deviceID: String?, digest: String) {
            self.id = id
            self.kind = kind
            self.deviceID = deviceID
            self.digest = digest
        }

        var principal: Principal {
            switch kind {
            case .adminKey: .admin(keyID: id)
            case .deviceToken: .device(deviceID: deviceID ?? "", tokenID: id)
            }
        }
    }

    /// Why a presented credential was not accepted (said in the 401's message; never the secret).
    public enum Refusal: Error, Sendable, Equatable {
        case missing
        case malformed
        case unknown
    }

    private struct State {
        var entries: [String: Entry] = [:] // by id; ids are 64-bit random, unique across kinds
        var environmentAdminDigest: String?
    }

    private let state = Mutex(State())

    /// - Parameter environmentAdminKey: SPEAKERSYNC_ADMIN_KEY: when set it is an admin key besides the
    ///   stored ones (any text of at least `minimumEnvironmentKeyLength` characters; checked by the caller).
    public init(environmentAdminKey: String? = nil) {
        state.withLock { $0.environmentAdminDigest = environmentAdminKey.map(Credential.digest(of:)) }
    }

    public static let minimumEnvironmentKeyLength = 32

    /// The principal of a presented credential.
    public func authenticate(_ presented: String?) -> Result<Principal, Refusal> {
        guard let presented, !presented.isEmpty else { return .failure(.missing) }
        let digest = Credential.digest(of: presented)
        return state.withLock { state in
            if let environment = state.environmentAdminDigest, Credential.digestsMatch(digest, environment) {
                return .success(.admin(keyID: "env"))
            }
            guard let (kind, id) = Credential.parse(presented) else { return .failure(.malformed) }
            guard let entry = state.entries[id], entry.kind == kind, Credential.digestsMatch(digest, entry.digest) else {
                return .failure(.unknown)
            }
            return .success(entry.principal)
        }
    }

    /// Whether `principal`'s credential is still live (not revoked or rotated away): for work it asked
    /// for that runs on after its request, such as a test recording's sessions.
    public func holds(_ principal: Principal) -> Bool {
        state.withLock { state in
            if principal == .admin(keyID: "env") { return state.environmentAdminDigest != nil }
            let id = switch principal {
            case .admin(let keyID): keyID
            case .device(_, let tokenID): tokenID
            }
            return state.entries[id]?.principal == principal
        }
    }

    /// Installs the complete set of live credentials; returns the principals whose credential is gone.
    @discardableResult
    public func replace(with entries: [Entry]) -> Set<Principal> {
        let fresh = Dictionary(entries.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return state.withLock { state in
            let gone = state.entries.values.filter { fresh[$0.id] != $0 }.map(\.principal)
            state.entries = fresh
            return Set(gone)
        }
    }

    /// Adds one credential (this server just created it; the next refresh reads it back anyway).
    public func add(_ entry: Entry) {
        state.withLock { $0.entries[entry.id] = entry }
    }

    /// Removes one credential at once; returns its principal when it was known.
    @discardableResult
    public func remove(id: String) -> Principal? {
        state.withLock { $0.entries.removeValue(forKey: id)?.principal }
    }

    public var count: Int { state.withLock { $0.entries.count } }
}
