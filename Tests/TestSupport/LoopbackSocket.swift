import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket bound on 127.0.0.1 to a port the kernel picks: listening (a port another process holds)
/// or only bound (to learn a free port). The caller closes `fd`.
public enum LoopbackSocket {
    public static func bind(listening: Bool) -> (fd: Int32, port: Int)? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, length) == 0 && (!listening || listen(fd, 1) == 0) && getsockname(fd, $0, &length) == 0
            }
        }
        guard ready else {
            close(fd)
            return nil
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
