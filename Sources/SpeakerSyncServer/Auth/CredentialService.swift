import Dispatch
import Foundation
import Logging
import SpeakerSyncStore
import Synchronization

/// Device tokens and admin keys in PostgreSQL, mirrored into the `CredentialBook` the gate checks.
/// Revocations (here, or read from the database after another server made them) are reported to
/// `onRevoked`, which closes the sessions those credentials opened.
/// `@unchecked Sendable`: the refresh timer and the listener are the only mutable state and `lock` guards them.
final class CredentialService: @unchecked Sendable {
    let book: CredentialBook
    private let repository: ConversationRepository
    private let logger: Logger
    private let onRevoked = Mutex<(@Sendable (Set<Principal>) -> Void)?>(nil)
    private let lock = NSLock()
    private var timer: (any DispatchSourceTimer)?
    private var listener: ChannelListener?
    /// Serialises every read-then-install of the book with every change: a refresh that read the
    /// database just before a token was inserted must not install its stale set afterwards (the new
    /// token would vanish for a refresh period and its first session be closed as revoked).
    private let changes = NSLock()
    static let maxLabelLength = 200
    static let maxDeviceIDLength = 128

    init(repository: ConversationRepository, book: CredentialBook, logger: Logger) {
        self.repository = repository
        self.book = book
        self.logger = logger
    }

    func whenRevoked(_ body: @escaping @Sendable (Set<Principal>) -> Void) {
        onRevoked.withLock { $0 = body }
    }

    /// Reads every live credential into the book; principals that lost theirs are reported.
    func refresh() throws {
        try changes.withLock { try refreshLocked() }
    }

    private func refreshLocked() throws {
        let live = try repository.liveCredentials()
        let entries = live.tokens.map { CredentialBook.Entry(id: $0.tokenID, kind: .deviceToken, deviceID: $0.deviceID, digest: $0.digest) }
            + live.adminKeys.map { CredentialBook.Entry(id: $0.keyID, kind: .adminKey, deviceID: nil, digest: $0.digest) }
        let gone = book.replace(with: entries)
        if !gone.isEmpty { report(gone) }
    }

    /// Refreshes every `seconds` until `stop`.
    func startRefreshing(every seconds: Double) {
        guard seconds > 0 else { return }
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "speakersync.credentials"))
        source.schedule(deadline: .now() + seconds, repeating: seconds, leeway: .milliseconds(200))
        source.setEventHandler { [weak self] in
            do { try self?.refresh() } catch {
                self?.logger.warning("cannot read credentials; keeping the last ones", metadata: ["error": "\(error)"])
            }
        }
        source.resume()
        lock.withLock { timer = source }
    }

    /// Reloads whenever a credential changes in the database (another server's revocation included),
    /// told by PostgreSQL's NOTIFY on `speakersync_credentials` (schema/0009); the periodic refresh
    /// stays as the fallback.
    func startListening(connectionString: String) {
        let listener = ChannelListener(channel: "speakersync_credentials", connectionString: connectionString, logger: logger) { [weak self] _ in
            // On every notification and after every LISTEN (what was missed meanwhile).
            do { try self?.refresh() } catch {
                self?.logger.warning("cannot read credentials; keeping the last ones", metadata: ["error": "\(error)"])
            }
        }
        listener.start()
        lock.withLock { self.listener = listener }
    }

    func stop() {
        let listener = lock.withLock {
            timer?.cancel()
            timer = nil
            defer { self.listener = nil }
            return self.listener
        }
        listener?.stop()
    }

    /// At start: with no live admin key stored (or `reset`), generates one, stores its digest and
    /// returns it so the caller shows it once. nil when a stored key is already live.
    func bootstrapAdminKey(reset: Bool) throws -> Credential? {
        try changes.withLock {
            let live = try repository.liveCredentials().adminKeys
            guard reset || live.isEmpty else { return nil }
            return try rotateAdminKeyLocked()
        }
    }

    /// A new admin key; every other stored one is revoked in the same transaction (sessions they
    /// opened are closed). SPEAKERSYNC_ADMIN_KEY, when set, stays valid: it is changed in the environment.
    func rotateAdminKey() throws -> Credential {
        try changes.withLock { try rotateAdminKeyLocked() }
    }

    private func rotateAdminKeyLocked() throws -> Credential {
        let key = try Credential.generate(.adminKey)
        try repository.insertAdminKey(AdminKeyRecord(keyID: key.id, digest: key.digest), revokingOthers: true)
        try refreshLocked()
        logger.notice("admin key created; the previous ones are revoked", metadata: ["key_id": "\(key.id)"])
        return key
    }

    func createToken(deviceID: String, label: String) throws -> (Credential, DeviceTokenRecord) {
        let token = try Credential.generate(.deviceToken)
        let record = DeviceTokenRecord(tokenID: token.id, deviceID: deviceID, digest: token.digest, label: label)
        try changes.withLock {
            try repository.insertDeviceToken(record)
            book.add(CredentialBook.Entry(id: token.id, kind: .deviceToken, deviceID: deviceID, digest: token.digest))
        }
        logger.info("device token created", metadata: ["device": "\(deviceID)", "token_id": "\(token.id)"])
        return (token, try repository.deviceTokens(deviceID: deviceID).first { $0.tokenID == token.id } ?? record)
    }

    func tokens(deviceID: String?) throws -> [DeviceTokenRecord] {
        try repository.deviceTokens(deviceID: deviceID)
    }

    /// Revokes at once: the book forgets it before this returns and its sessions are closed.
    func revoke(deviceID: String, tokenID: String) throws -> Bool {
        let principal: Principal?? = try changes.withLock {
            guard try repository.revokeDeviceToken(deviceID: deviceID, tokenID: tokenID) else { return .none }
            return .some(book.remove(id: tokenID))
        }
        guard let removed = principal else { return false }
        if let removed { report([removed]) }
        logger.info("device token revoked", metadata: ["device": "\(deviceID)", "token_id": "\(tokenID)"])
        return true
    }

    private func report(_ principals: Set<Principal>) {
        logger.info("credentials revoked; closing their sessions", metadata: ["credentials": "\(principals.map(\.credentialKey).sorted())"])
        onRevoked.withLock { $0 }?(principals)
    }

    /// Writes a generated admin key where the operator can find it (`AdminKeyFile`). Returns the path,
    /// or nil (and says why) when it cannot: the key is then only printed.
    static func writeKeyFile(_ key: Credential, path: String, logger: Logger) -> String? {
        do {
            try AdminKeyFile.write(key.text, to: path)
            return path
        } catch {
            logger.warning("cannot write the admin key file; it is only printed", metadata: ["path": "\(path)", "error": "\(error)"])
            return nil
        }
    }
}
