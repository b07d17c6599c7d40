#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a server could bind its port now, by binding a socket there and closing it at once.
/// libwebsockets only logs why it could not bind ("ERROR on binding fd 33 to port 8080 (-1 98)") and
/// returns no context; this finds the errno again, so a taken port is reported as such.
public enum ListenPortProbe {
    /// The errno of binding `host:port` (IPv4, with SO_REUSEADDR as lws binds, so a socket of an
    /// earlier run lingering in TIME_WAIT does not count); nil when it binds, when the port is 0 (any
    /// free one), or when `host` is not an IPv4 address (an interface name) and cannot be checked here.
    /// `host` nil or "0.0.0.0": every interface.
    public static func bindError(host: String?, port: Int) -> Int32? {
        guard port > 0, port <= Int(UInt16.max) else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        if let host, host != "0.0.0.0" {
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { return nil }
        } else {
            address.sin_addr.s_addr = INADDR_ANY
        }
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return bound == 0 ? nil : errno
    }

    /// Why `host:port` cannot be listened on, in words ("port 8080: address already in use"), or nil
    /// when the probe finds nothing wrong.
    public static func problem(host: String?, port: Int) -> String? {
        guard let error = bindError(host: host, port: port) else { return nil }
        switch error {
        case EADDRINUSE: return "port \(port): address already in use"
        case EACCES: return "port \(port): permission denied (ports below 1024 need privileges)"
        case EADDRNOTAVAIL: return "\(host ?? "0.0.0.0"): address not available on this machine"
        default: return "port \(port): \(String(cString: strerror(error)))"
        }
    }
}
