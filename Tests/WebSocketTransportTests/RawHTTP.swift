import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.1 client over a POSIX socket, so HTTP tests do not go through lws.
struct RawHTTPResponse {
    var status: Int
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

struct RawHTTPError: Error, CustomStringConvertible {
    let description: String
}

/// Sends `request` bytes to 127.0.0.1:`port` and reads one response (by Content-Length, or until EOF).
func rawHTTP(port: Int, request: [UInt8]) throws -> RawHTTPResponse {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RawHTTPError(description: "socket failed") }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 15, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw RawHTTPError(description: "connect failed: errno \(errno)") }
    var sent = 0
    while sent < request.count {
        let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n > 0 else { break } // the server may close early (413): read what it said
        sent += n
    }
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    var headerEnd: Int?
    var contentLength: Int?
    while true {
        if let headerEnd, let contentLength, received.count >= headerEnd + contentLength { break }
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        received.append(contentsOf: chunk[..<n])
        if headerEnd == nil, let range = find([13, 10, 13, 10], in: received) {
            headerEnd = range
            let head = String(decoding: received[..<range], as: UTF8.self)
            for line in head.split(separator: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == "content-length" {
                    contentLength = Int(parts[1].trimmingCharacters(in: .whitespaces))
                }
            }
        }
    }
    guard let headerEnd else { throw RawHTTPError(description: "no complete response header (\(received.count) bytes)") }
    let head = String(decoding: received[..<headerEnd], as: UTF8.self)
    let lines = head.split(separator: "\r\n")
    let statusParts = lines.first?.split(separator: " ") ?? []
    guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
        throw RawHTTPError(description: "bad status line: \(lines.first ?? "")")
    }
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
    }
    return RawHTTPResponse(status: status, headers: headers, body: Array(received[(headerEnd + 4)...]))
}

func rawHTTP(port: Int, _ request: String, body: [UInt8] = []) throws -> RawHTTPResponse {
    try rawHTTP(port: port, request: Array(request.utf8) + body)
}

private func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle) {
        return start
    }
    return nil
}
