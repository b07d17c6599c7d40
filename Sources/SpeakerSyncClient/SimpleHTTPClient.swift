import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP response as read by `SimpleHTTPClient`.
public struct SimpleHTTPResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }
    public func json() -> Any? { try? JSONSerialization.jsonObject(with: Data(body)) }
}

public struct SimpleHTTPError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// A minimal blocking HTTP/1.1 client (one request per connection, `Connection: close`) for the CLI
/// and tests: http:// and https:// (OpenSSL, certificate and host name verified), no redirects,
/// no proxies.
public enum SimpleHTTPClient {
    /// - Parameters:
    ///   - token: sent as `Authorization: Bearer <token>` (a device token or the admin key).
    ///   - headers: extra request headers, sent as given.
    ///   - caFilePath: for https://, PEM certificates that are the only trust anchors (a self-signed
    ///     server's certificate); nil uses OpenSSL's default store (the OS CA certificates).
    public static func get(_ url: String, token: String? = nil, timeoutSeconds: Int = 30, headers: [(String, String)] = [],
                           caFilePath: String? = nil) throws -> SimpleHTTPResponse {
        try request(method: "GET", url: url, body: [], token: token, timeoutSeconds: timeoutSeconds, headers: headers, caFilePath: caFilePath)
    }

    public static func request(method: String, url: String, body: [UInt8], contentType: String = "application/json",
                               token: String? = nil, timeoutSeconds: Int = 30, headers: [(String, String)] = [],
                               caFilePath: String? = nil) throws -> SimpleHTTPResponse {
        let headers = headers + (token.map { [("Authorization", "Bearer \($0)")] } ?? [])
        guard let components = URLComponents(string: url), let host = components.host,
              let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw SimpleHTTPError(description: "not an http:// or https:// URL: \(url)")
        }
        let secure = scheme == "https"
        let port = components.port ?? (secure ? 443 : 80)
        let target = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
            + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        for (name, value) in headers where (name + value).contains(where: { $0 == "\r" || $0 == "\n" }) || name.isEmpty {
            throw SimpleHTTPError(description: "header \(name.debugDescription) is empty or contains a line break")
        }

        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SimpleHTTPError(description: "cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { throw SimpleHTTPError(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            throw SimpleHTTPError(description: "cannot connect to \(host):\(port): \(String(cString: strerror(errno)))")
        }
        let tls = secure ? try TLSClientSession(socket: fd, host: host, caFilePath: caFilePath) : nil

        let hostHeader = components.port == nil ? host : "\(host):\(port)"
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\nUser-Agent: speakersync\r\n"
        if !body.isEmpty || method == "POST" || method == "PUT" {
            head += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n"
        }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let n: Int
            if let tls {
                n = try request[sent...].withUnsafeBytes { try tls.write($0) }
            } else {
                n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { throw SimpleHTTPError(description: "send: \(String(cString: strerror(errno)))") }
            }
            sent += n
        }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n: Int
            if let tls {
                n = try buffer.withUnsafeMutableBytes { try tls.read($0) }
            } else {
                n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n < 0 { throw SimpleHTTPError(description: "recv: \(String(cString: strerror(errno)))") }
            }
            if n == 0 { break }
            response += buffer[0..<n]
            if let parsed = parse(response), parsed.complete { return parsed.response }
        }
        guard let parsed = parse(response) else { throw SimpleHTTPError(description: "malformed HTTP response") }
        return parsed.response
    }

    /// Parses a response; `complete` once Content-Length bytes of body are in (or the peer closed).
    static func parse(_ bytes: [UInt8]) -> (response: SimpleHTTPResponse, complete: Bool)? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let headerEnd = bytes.indices.dropLast(3).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else { return nil }
        let head = String(decoding: bytes[..<headerEnd], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(headerEnd + 4)...])
        var complete = false
        if let length = headers["content-length"].flatMap(Int.init) {
            complete = body.count >= length
            if complete { body = Array(body.prefix(length)) }
        }
        return (SimpleHTTPResponse(status: status, headers: headers, body: body), complete)
    }
}
