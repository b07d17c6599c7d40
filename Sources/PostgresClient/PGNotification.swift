/// One NOTIFY received on a channel this connection listens to (`PGConnection.listen`).
public struct PGNotification: Sendable, Hashable {
    public var channel: String
    /// The NOTIFY's payload text ("" when none was given).
    public var payload: String
    /// The backend process that sent it (this connection's own, for a NOTIFY it sent itself).
    public var senderProcessID: Int
}
