import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Resolves a host the way the listener would and tells loopback addresses apart.
enum LoopbackCheck {
    enum Address: Equatable {
        case v4([UInt8])
        case v6([UInt8])
    }

    /// Every address `host` resolves to (numeric addresses without a lookup).
    static func addresses(of host: String) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var result: [Address] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let entry = node {
            if let socketAddress = entry.pointee.ai_addr {
                switch entry.pointee.ai_family {
                case AF_INET:
                    let address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    result.append(.v4(withUnsafeBytes(of: address) { Array($0) }))
                case AF_INET6:
                    let address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    result.append(.v6(withUnsafeBytes(of: address) { Array($0) }))
                default:
                    break
                }
            }
            node = entry.pointee.ai_next
        }
        return result
    }

    static func isLoopback(_ address: Address) -> Bool {
        switch address {
        case .v4(let bytes):
            return bytes.first == 127
        case .v6(let bytes):
            guard bytes.count == 16 else { return false }
            if bytes == [UInt8](repeating: 0, count: 15) + [1] { return true }      // ::1
            let mapped = [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF]            // ::ffff:a.b.c.d
            return Array(bytes[0..<12]) == mapped && bytes[12] == 127
        }
    }
}
