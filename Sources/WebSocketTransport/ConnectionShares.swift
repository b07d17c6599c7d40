/// What one client may hold of the server's connections, so that no client can take them all:
/// connections (HTTP or WebSocket) per client address, and HTTP requests in flight (from the end of
/// their headers to the last byte of the answer) per credential, the `Authorization` header's value.
/// Without them one device token with a dozen sockets held every place of `maxConnections` and the
/// other devices got 503 (issue 28). Pure bookkeeping, service thread only; 0 turns a cap off.
struct ConnectionShares {
    let maxConnectionsPerAddress: Int
    let maxRequestsInFlightPerCredential: Int
    private(set) var connectionsByAddress: [String: Int] = [:]
    private(set) var requestsByCredential: [String: Int] = [:]

    init(maxConnectionsPerAddress: Int, maxRequestsInFlightPerCredential: Int) {
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.maxRequestsInFlightPerCredential = maxRequestsInFlightPerCredential
    }

    /// True when one more connection from `address` would pass its cap (an unknown address is not capped).
    func addressIsFull(_ address: String?) -> Bool {
        guard maxConnectionsPerAddress > 0, let address else { return false }
        return connectionsByAddress[address, default: 0] >= maxConnectionsPerAddress
    }

    mutating func connectionOpened(from address: String?) {
        guard let address else { return }
        connectionsByAddress[address, default: 0] += 1
    }

    mutating func connectionClosed(from address: String?) {
        guard let address, let count = connectionsByAddress[address] else { return }
        connectionsByAddress[address] = count > 1 ? count - 1 : nil
    }

    /// True when one more request in flight with `credential` would pass its cap (no credential: not capped).
    func credentialIsFull(_ credential: String?) -> Bool {
        guard maxRequestsInFlightPerCredential > 0, let credential else { return false }
        return requestsByCredential[credential, default: 0] >= maxRequestsInFlightPerCredential
    }

    mutating func requestStarted(with credential: String) {
        requestsByCredential[credential, default: 0] += 1
    }

    mutating func requestEnded(with credential: String) {
        guard let count = requestsByCredential[credential] else { return }
        requestsByCredential[credential] = count > 1 ? count - 1 : nil
    }
}
