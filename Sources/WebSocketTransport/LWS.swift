import CLibWebSockets
#if canImport(Glibc)
import Glibc
#endif

/// The one place that calls libwebsockets. Everything here runs on a context's service thread
/// (except `cancelService`, which lws documents as callable from any thread, and context
/// creation/destruction, see `LWSContext`). Return codes become thrown `TransportError`s or plain
/// Swift values; `wsi` pointers never leave the transport.
enum LWS {
    /// The C callback signature lws expects in `lws_protocols.callback`.
    typealias Callback = @convention(c) (OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int) -> Int32

    /// Headroom required in front of every buffer given to `lws_write`.
    static let pre = Int(shim_lws_pre())

    // MARK: Context

    /// Builds the protocol table for `lws_create_context`: one entry per name, all with the same
    /// callback (the first also handles HTTP), plus the terminator. Caller owns the result and frees
    /// it with `freeProtocols(_:count:)` giving the same number of names.
    static func makeProtocols(names: [UnsafePointer<CChar>], callback: Callback, rxBufferBytes: Int) -> UnsafeMutablePointer<lws_protocols> {
        let table = UnsafeMutablePointer<lws_protocols>.allocate(capacity: names.count + 1)
        for (index, name) in names.enumerated() {
            var proto = lws_protocols()
            proto.name = name
            proto.callback = callback
            // The transport keeps its per-connection state in Swift and never uses this memory, but lws
            // delivers WS_SERVER_DROP_PROTOCOL (which the closing handshake relies on, see
            // ServerCore+Closing) only to connections that have per-session user space.
            proto.per_session_data_size = 8
            proto.rx_buffer_size = rxBufferBytes
            (table + index).initialize(to: proto)
        }
        (table + names.count).initialize(to: lws_protocols())
        return table
    }

    static func freeProtocols(_ table: UnsafeMutablePointer<lws_protocols>, count: Int) {
        table.deinitialize(count: count + 1)
        table.deallocate()
    }

    /// TLS settings of a context; the C strings belong to the caller (`LWSContext`) and must outlive the context.
    enum TLSOptions {
        /// Serve TLS only (wss:// and https://) with these PEM files.
        case server(certificate: UnsafePointer<CChar>, privateKey: UnsafePointer<CChar>, alpn: UnsafePointer<CChar>)
        /// Allow wss:// connections: trust `caFile` alone when given, else the OS store.
        case client(caFile: UnsafePointer<CChar>?, alpn: UnsafePointer<CChar>)
    }

    /// `lws_create_context`. `port` nil means a client-only context (no listening socket).
    static func createContext(port: Int?, iface: UnsafePointer<CChar>?, protocols: UnsafePointer<lws_protocols>,
                              tls: TLSOptions?, user: UnsafeMutableRawPointer,
                              timeouts: (handshakeSeconds: Int, keepAliveSeconds: Int)?) throws -> OpaquePointer {
        var info = lws_context_creation_info()
        if let timeouts {
            // timeout_secs bounds every network wait lws protects, among them a new connection's wait
            // for a complete request: an idle or slow (slowloris) unauthenticated socket is closed then.
            info.timeout_secs = UInt32(timeouts.handshakeSeconds)
            info.keepalive_timeout = Int32(timeouts.keepAliveSeconds)
            info.timeout_secs_ah_idle = UInt32(timeouts.handshakeSeconds)
        }
        info.port = port.map { Int32($0) } ?? shim_lws_context_port_no_listen()
        info.iface = iface
        info.protocols = protocols
        info.gid = -1
        info.uid = -1
        info.user = user
        info.options = shim_lws_option_validate_utf8()
        if port != nil {
            info.options |= shim_lws_option_fail_upon_unable_to_bind() | shim_lws_option_disable_ipv6()
        }
        switch tls {
        case .server(let certificate, let privateKey, let alpn)?:
            // Without LWS_SERVER_OPTION_ALLOW_NON_SSL_ON_SSL_PORT the listener speaks TLS only: a
            // plaintext request fails the handshake and is closed, nothing is served in clear.
            info.options |= shim_lws_option_do_ssl_global_init()
            info.ssl_cert_filepath = certificate
            info.ssl_private_key_filepath = privateKey
            // Mozilla's intermediate profile: TLS 1.2+ and, for 1.2, forward-secret AEAD suites only
            // (lws's default list let TLS 1.2 clients pick AES256-SHA256, with no forward secrecy).
            info.ssl_cipher_list = shim_tls12_server_ciphers()
            info.tls1_3_plus_cipher_list = shim_tls13_server_ciphers()
            info.ssl_options_set = shim_tls_server_options()
            // This lws is built with HTTP/2 and would offer "h2,http/1.1"; the transport's HTTP path
            // (connection: close, keep-alive bookkeeping) is HTTP/1.1 only, so offer only that.
            info.alpn = alpn
        case .client(let caFile, let alpn)?:
            info.options |= shim_lws_option_do_ssl_global_init()
            if let caFile {
                // Debian's lws is built with LWS_SSL_CLIENT_USE_OS_CA_CERTS, which would add the OS store
                // to the CA file; a given CA file is meant to be the only trust anchor (as in SimpleHTTPClient).
                info.client_ssl_ca_filepath = caFile
                info.options |= shim_lws_option_disable_os_ca_certs()
            }
            info.alpn = alpn
        case nil:
            break
        }
        guard let context = lws_create_context(&info) else {
            let what: String
            switch tls {
            case .server(let certificate, let privateKey, _)?:
                what = "port \(port.map(String.init) ?? "none"), TLS certificate \(String(cString: certificate)), key \(String(cString: privateKey)): "
                    + "OpenSSL rejected the certificate or key (corrupt PEM, or a key that does not match the certificate; lws logged which), or the port is unavailable"
            case .client(let caFile, _)?:
                what = "client, CA file \(caFile.map { String(cString: $0) } ?? "OS store")"
            case nil:
                what = "port \(port.map(String.init) ?? "none")"
            }
            // lws logs the bind's errno but does not return it: a taken port is told in plain words.
            if let port, ListenPortProbe.bindError(host: iface.map { String(cString: $0) }, port: port) == EADDRINUSE {
                throw TransportError(.addressInUse, "port \(port): address already in use")
            }
            throw TransportError(.contextCreationFailed, "lws_create_context failed (\(what))")
        }
        return context
    }

    static func destroyContext(_ context: OpaquePointer) {
        lws_context_destroy(context)
    }

    /// The port the default vhost listens on (the real one when 0 was asked for).
    static func listenPort(_ context: OpaquePointer) throws -> Int {
        guard let vhost = lws_get_vhost_by_name(context, "default") else {
            throw TransportError(.listenFailed, "context has no default vhost")
        }
        let port = Int(lws_get_vhost_listen_port(vhost))
        guard port > 0 else { throw TransportError(.listenFailed, "vhost reports listen port \(port)") }
        return port
    }

    /// One turn of the event loop; blocks until there is socket activity, a timer, or a cancel.
    static func service(_ context: OpaquePointer) -> Bool {
        lws_service(context, 0) >= 0
    }

    /// Wakes the service thread (it then gets LWS_CALLBACK_EVENT_WAIT_CANCELLED). Any thread.
    static func cancelService(_ context: OpaquePointer) {
        lws_cancel_service(context)
    }

    /// Routes lws's own log lines (errors and warnings only) to `emit`.
    static func setLogSink(_ emit: @convention(c) (Int32, UnsafePointer<CChar>?) -> Void) {
        lws_set_log_level(Int32(LLL_ERR | LLL_WARN), emit)
    }

    static func isErrorLevel(_ level: Int32) -> Bool { level & Int32(LLL_ERR) != 0 }

    // MARK: Per-wsi user pointers

    /// `lws_context_user` of the wsi's context: the Swift core object that owns the context.
    static func contextUser(_ wsi: OpaquePointer) -> UnsafeMutableRawPointer? {
        guard let context = lws_get_context(wsi) else { return nil }
        return lws_context_user(context)
    }

    /// The `ConnectionID` raw value stored in the wsi's opaque user data (0 when none yet).
    static func connectionID(_ wsi: OpaquePointer) -> UInt64 {
        UInt64(UInt(bitPattern: lws_get_opaque_user_data(wsi)))
    }

    static func setConnectionID(_ wsi: OpaquePointer, _ id: UInt64) {
        lws_set_opaque_user_data(wsi, UnsafeMutableRawPointer(bitPattern: UInt(id)))
    }

    // MARK: Writing

    static func requestWriteable(_ wsi: OpaquePointer) {
        _ = lws_callback_on_writable(wsi)
    }

    /// Writes one WebSocket frame. `buffer` must have `LWS.pre` bytes of headroom before `payload`.
    static func writeWebSocketFrame(_ wsi: OpaquePointer, payload: UnsafeMutablePointer<UInt8>, count: Int,
                                    isBinary: Bool, isFirst: Bool, isLast: Bool) throws {
        var mode: UInt32 = isFirst ? (isBinary ? LWS_WRITE_BINARY.rawValue : LWS_WRITE_TEXT.rawValue) : LWS_WRITE_CONTINUATION.rawValue
        if !isLast { mode |= LWS_WRITE_NO_FIN.rawValue }
        let written = lws_write(wsi, payload, count, lws_write_protocol(rawValue: mode))
        if written < count {
            throw TransportError(.lwsCallFailed, "lws_write returned \(written) for \(count) bytes")
        }
    }

    /// Sets the code and reason of the close frame lws sends when the callback then returns -1.
    static func setCloseReason(_ wsi: OpaquePointer, code: UInt16, reason: String) {
        // A close frame payload is at most 125 bytes: 2 for the code, 123 for the reason.
        var bytes = Array(reason.utf8.prefix(123))
        while !bytes.isEmpty, String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
        bytes.withUnsafeMutableBufferPointer { buffer in
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), buffer.baseAddress, buffer.count)
        }
    }

    // MARK: Closing

    /// Bytes of the close frame payload lws holds for this connection: set by `setCloseReason`, by lws
    /// itself when it fails a connection with a code (1002 for a bad opcode or RSV bits, 1007 for
    /// invalid UTF-8), or a peer's close being echoed. 0 when no close frame is prepared.
    static func preparedCloseLength(_ wsi: OpaquePointer) -> Int {
        Int(lws_get_close_length(wsi))
    }

    /// True while lws holds bytes of an earlier write the socket did not take. A callback must not
    /// return -1 then: lws would flush and drop the socket without writing the close frame.
    static func hasPendingOutput(_ wsi: OpaquePointer) -> Bool {
        lws_partial_buffered(wsi) != 0
    }

    // MARK: Receiving

    /// Whether the frame lws is delivering was masked, as far as this lws build lets us tell.
    enum FrameMasking: Equatable {
        case masked
        case unmasked
        /// The private state did not match what lws's public calls report: the layout is not the one
        /// this code was written against, and the bit must not be trusted.
        case unknown
    }

    /// lws 4.1.6 parses the MASK bit of every frame but never refuses a client frame without it
    /// (RFC 6455 §5.1 requires the server to fail such a connection), and it has no call that
    /// returns the bit. It keeps it in `struct _lws_websocket_related`, in a bit-field right after the
    /// close/ping buffer whose start `lws_get_close_payload` returns:
    ///
    ///     uint8_t ping_payload_buf[128 - 3 + LWS_PRE];   // lws_get_close_payload() = &buf[LWS_PRE]
    ///     unsigned int final:1;            // bit 0 of the next byte
    ///     unsigned int frame_is_binary:1;  // bit 1
    ///     unsigned int all_zero_nonce:1;   // bit 2
    ///     unsigned int this_frame_masked:1;// bit 3
    ///
    /// so byte 125 after the close payload holds the flags (GCC and Clang on x86-64 and arm64 start a
    /// bit-field in the first free byte). Before trusting bit 3, bits 0 and 1 are checked against
    /// `lws_is_final_fragment` and `lws_frame_is_binary`, which read the same two fields: when they
    /// disagree the layout is different and the answer is `.unknown`. Valid during a RECEIVE,
    /// RECEIVE_PONG or WS_PEER_INITIATED_CLOSE callback (the flags describe the frame being delivered).
    static func receivedFrameMasking(_ wsi: OpaquePointer) -> FrameMasking {
        guard let payload = lws_get_close_payload(wsi) else { return .unknown }
        let flags = payload[125]
        let isBinary = lws_frame_is_binary(wsi) != 0
        let isFinalFragment = lws_is_final_fragment(wsi) != 0
        // lws_is_final_fragment is `final && nothing left of the frame`, so only its true is exact.
        guard (flags & 0b10 != 0) == isBinary, !isFinalFragment || flags & 0b1 != 0 else { return .unknown }
        return flags & 0b1000 != 0 ? .masked : .unmasked
    }


    static func isFinalFragment(_ wsi: OpaquePointer) -> Bool { lws_is_final_fragment(wsi) != 0 }
    static func frameIsBinary(_ wsi: OpaquePointer) -> Bool { lws_frame_is_binary(wsi) != 0 }
    static func remainingPayload(_ wsi: OpaquePointer) -> Int { Int(lws_remaining_packet_payload(wsi)) }

    /// Clears lws's pending timeout on the connection (there is one slot per connection; lws sets
    /// its own while a connection holds request headers and drops the socket silently when it fires).
    static func clearPendingTimeout(_ wsi: OpaquePointer) {
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
    }

    /// lws closes the connection if it still exists after `seconds` (its own pending-timeout machinery).
    /// It drops the socket without a close frame: meant for a peer that reads nothing, which could not
    /// receive one anyway.
    static func closeWithin(_ wsi: OpaquePointer, seconds: Int32) {
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, seconds)
    }

    /// Stops reading from the socket for good once a failed connection's close frame is on its way.
    ///
    /// lws re-enables reading for the application's own reason (`lws_rx_flow_control(wsi, 1)`) while
    /// its close frame waits to be written, and its service loop serves the same socket again when a
    /// callback began a close: bytes a client keeps sending after a framing error are parsed as frames,
    /// and the second error makes lws drop TCP without the close frame. A reason bit of our own (b1,
    /// one of the six lws leaves to users; `setReceiving` uses b0) is not cleared by that, so nothing
    /// more is read: the close frame goes out at the next POLLOUT. lws then gives up waiting for the
    /// peer's answer after its close timeout (5 s) and closes the socket.
    static func stopReceivingForClose(_ wsi: OpaquePointer) {
        let closingReason = 1 << 1
        _ = lws_rx_flow_control(wsi, Int32(LWS_RXFLOW_REASON_APPLIES_DISABLE | closingReason | LWS_RXFLOW_REASON_FLAG_PROCESS_NOW))
    }

    /// Asks for one LWS_CALLBACK_TIMER on this connection after `seconds` (replacing any earlier one).
    /// Unlike `closeWithin`, the callback decides what happens (an answer, a close frame).
    static func setTimer(_ wsi: OpaquePointer, seconds: Double) {
        lws_set_timer_usecs(wsi, lws_usec_t(max(0.001, seconds) * 1_000_000))
    }

    /// lws 4.1.6 has no cancel: LWS_SET_TIMER_USEC_CANCEL (-1) there schedules the timer a microsecond
    /// ago, so it fires at once (cancelling came in 4.4). A day away is as good as never: the connection's
    /// next request arms its own deadline, and a closed connection takes its timer with it.
    static func cancelTimer(_ wsi: OpaquePointer) {
        lws_set_timer_usecs(wsi, 86_400 * 1_000_000)
    }

    /// Pauses (false) or resumes (true) reading from the socket.
    static func setReceiving(_ wsi: OpaquePointer, enabled: Bool) throws {
        let result = lws_rx_flow_control(wsi, enabled ? 1 : 0)
        if result < 0 { throw TransportError(.lwsCallFailed, "lws_rx_flow_control returned \(result)") }
    }

    /// Parses a close frame payload (`in`/`len` of WS_PEER_INITIATED_CLOSE).
    static func parseClosePayload(_ bytes: UnsafeMutableRawPointer?, _ count: Int) -> (code: UInt16?, reason: String?) {
        guard let bytes, count >= 2 else { return (nil, nil) }
        let raw = UnsafeRawBufferPointer(start: bytes, count: count)
        let code = UInt16(raw[0]) << 8 | UInt16(raw[1])
        let reason = count > 2 ? String(decoding: raw[2...], as: UTF8.self) : nil
        return (code, reason)
    }

    // MARK: HTTP request parsing

    /// The request method, from which URI token lws filled in.
    static func httpMethod(_ wsi: OpaquePointer) -> String? {
        let candidates: [(lws_token_indexes, String)] = [
            (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_PUT_URI, "PUT"),
            (WSI_TOKEN_PATCH_URI, "PATCH"), (WSI_TOKEN_DELETE_URI, "DELETE"), (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
            (WSI_TOKEN_HEAD_URI, "HEAD"),
        ]
        for (token, name) in candidates where lws_hdr_total_length(wsi, token) > 0 { return name }
        return nil
    }

    /// The request line's target as lws stored it, for `RequestTarget` to check before anything acts
    /// on it (lws has already percent-decoded it and removed `..` segments); nil without a method.
    static func requestTarget(_ wsi: OpaquePointer) -> RequestTarget? {
        for token in [WSI_TOKEN_GET_URI, WSI_TOKEN_POST_URI, WSI_TOKEN_PUT_URI, WSI_TOKEN_PATCH_URI,
                      WSI_TOKEN_DELETE_URI, WSI_TOKEN_OPTIONS_URI, WSI_TOKEN_HEAD_URI] {
            guard let path = tokenFragments(wsi, token) else { continue }
            let query = tokenFragments(wsi, WSI_TOKEN_HTTP_URI_ARGS)
            let version = tokenFragments(wsi, WSI_TOKEN_HTTP)
            // lws stores the query and the version after the path in one header buffer; whether the
            // version is where the counted lengths put it tells whether it stored a byte it did not
            // count (RequestTarget). The bytes read lie before the version's end, inside what lws wrote.
            var stored: [UInt8]?
            var start: UnsafeMutablePointer<CChar>?
            var length: Int32 = 0
            if let first = version?.first, lws_http_get_uri_and_method(wsi, &start, &length) >= 0, let start {
                let offset = RequestTarget.versionOffset(pathFragments: path, queryFragments: query)
                stored = (0...first.count).map { UInt8(bitPattern: start[offset + $0]) }
            }
            return RequestTarget(pathFragments: path, queryFragments: query, versionFragments: version, storedAtVersion: stored)
        }
        return nil
    }

    /// Every fragment lws stored a token in (a path or query split at `&` or `;`), each copied byte for
    /// byte: `lws_hdr_copy_fragment` copies with memcpy, so a NUL lws stored inside one shows, where
    /// `lws_hdr_copy` stops at it and joins fragments with `,`. Empty fragments are kept (`a=1&&b=2`
    /// has one; `lws_hdr_fragment_length` gives 0 for it as for a missing one). Nil when lws never
    /// began the token (`lws_hdr_copy_fragment` fails for its first fragment only then).
    static func tokenFragments(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> [[UInt8]]? {
        var fragments: [[UInt8]] = []
        var index: Int32 = 0
        while true {
            let length = Int(lws_hdr_fragment_length(wsi, token, index))
            var buffer = [CChar](repeating: 0, count: length + 1)
            let copied = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), token, index)
            guard copied >= 0 else { break } // past the last fragment
            fragments.append(buffer[..<Int(copied)].map { UInt8(bitPattern: $0) })
            index += 1
        }
        return fragments.isEmpty ? nil : fragments
    }

    /// One header's full value, or nil when absent.
    static func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let copied = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token)
        guard copied >= 0 else { return nil }
        return String(decoding: buffer[..<Int(copied)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Every request header lws parsed into a known token, names lower-case without the colon.
    static func headers(_ wsi: OpaquePointer) -> [String: String] {
        var result: [String: String] = [:]
        for raw in 0..<WSI_TOKEN_COUNT.rawValue {
            let token = lws_token_indexes(rawValue: raw)
            guard let namePointer = lws_token_to_string(token) else { continue }
            let name = String(cString: namePointer)
            guard name.hasSuffix(":"), !name.hasPrefix(":") else { continue } // skip methods and h2 pseudo-headers
            if let value = header(wsi, token) { result[String(name.dropLast())] = value }
        }
        return result
    }

    /// Content-Length of the request, if it announced one.
    static func contentLength(_ wsi: OpaquePointer) -> Int? {
        header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH).flatMap { Int($0.trimmingCharacters()) }
    }

    static func peerAddress(_ wsi: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 128)
        guard let name = lws_get_peer_simple(wsi, &buffer, buffer.count) else { return nil }
        let text = String(cString: name)
        return text.isEmpty ? nil : text
    }

    // MARK: HTTP responses

    /// Writes the status line and headers of a response into `scratch` (after `LWS.pre` headroom) and
    /// sends them in one `lws_write`. Sets lws's content length so keep-alive bookkeeping is right.
    static func writeHTTPHeaders(_ wsi: OpaquePointer, status: Int, contentType: String, contentLength: Int,
                                 extraHeaders: [(String, String)], closeConnection: Bool,
                                 scratch: UnsafeMutableBufferPointer<UInt8>) throws {
        guard let base = scratch.baseAddress, scratch.count > pre else {
            throw TransportError(.lwsCallFailed, "header scratch buffer too small")
        }
        let start = base + pre
        let end = base + scratch.count - 1
        var cursor: UnsafeMutablePointer<UInt8>? = start
        func check(_ result: Int32, _ what: String) throws {
            if result != 0 { throw TransportError(.lwsCallFailed, "\(what) failed (headers too large?)") }
        }
        try check(lws_add_http_header_status(wsi, UInt32(status), &cursor, end), "lws_add_http_header_status")
        var type = Array(contentType.utf8)
        try check(lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, &type, Int32(type.count), &cursor, end),
                  "content-type header")
        try check(lws_add_http_header_content_length(wsi, lws_filepos_t(contentLength), &cursor, end), "content-length header")
        var headers = extraHeaders
        if closeConnection { headers.append(("connection", "close")) }
        try addHeaders(wsi, headers, cursor: &cursor, end: end)
        try check(lws_finalize_http_header(wsi, &cursor, end), "lws_finalize_http_header")
        guard let cursor else { throw TransportError(.lwsCallFailed, "header cursor lost") }
        let count = cursor - start
        let written = lws_write(wsi, start, count, LWS_WRITE_HTTP_HEADERS)
        // lws logs the send's errno at debug level only; it says whether the peer reset or the socket was shut down.
        if written < count { throw TransportError(.lwsCallFailed, "lws_write(headers) returned \(written) for \(count) (\(String(cString: strerror(errno))))") }
    }

    /// Writes one chunk of an HTTP body; `isLast` marks the end of the response for lws.
    static func writeHTTPBody(_ wsi: OpaquePointer, payload: UnsafeMutablePointer<UInt8>, count: Int, isLast: Bool) throws {
        let written = lws_write(wsi, payload, count, isLast ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
        if written < count { throw TransportError(.lwsCallFailed, "lws_write(body) returned \(written) for \(count) (\(String(cString: strerror(errno))))") }
    }

    /// Ends an HTTP transaction; true when lws says the connection must now close (no keep-alive).
    static func completeHTTPTransaction(_ wsi: OpaquePointer) -> Bool {
        lws_http_transaction_completed(wsi) != 0
    }

    /// Answers a refused upgrade from HTTP_CONFIRM_UPGRADE with a complete response in one write: the
    /// status line, `headers`, `Content-Type`, `Content-Length`, `Connection: close` and `body`. The
    /// callback must then return 1 (lws ends the transaction and, without keep-alive, the connection).
    ///
    /// The status line is written here rather than by `lws_add_http_header_status`: at this point lws
    /// has not yet read the request's HTTP version and would answer "HTTP/1.0", and its reason table
    /// has no phrase for 429. An upgrade request is always HTTP/1.1 (RFC 6455 §4.1).
    static func refuseUpgrade(_ wsi: OpaquePointer, status: Int, reasonPhrase: String, contentType: String,
                              headers: [(String, String)], body: [UInt8]) throws {
        var buffer = [UInt8](repeating: 0, count: pre + 1024 + body.count + headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 })
        try buffer.withUnsafeMutableBufferPointer { scratch in
            let start = scratch.baseAddress! + pre
            let end = scratch.baseAddress! + scratch.count - 1
            var cursor: UnsafeMutablePointer<UInt8>? = start
            var statusLine = Array("HTTP/1.1 \(status) \(reasonPhrase)".utf8)
            if lws_add_http_header_by_name(wsi, nil, &statusLine, Int32(statusLine.count), &cursor, end) != 0 {
                throw TransportError(.lwsCallFailed, "status line does not fit")
            }
            try addHeaders(wsi, [("content-type", contentType), ("content-length", String(body.count))] + headers
                           + [("connection", "close")], cursor: &cursor, end: end)
            if lws_finalize_http_header(wsi, &cursor, end) != 0 {
                throw TransportError(.lwsCallFailed, "lws_finalize_http_header failed")
            }
            guard var position = cursor, position + body.count <= end else {
                throw TransportError(.lwsCallFailed, "refusal body does not fit")
            }
            body.withUnsafeBufferPointer { source in
                if let base = source.baseAddress { position.update(from: base, count: body.count) }
            }
            position += body.count
            let count = position - start
            // Whatever the socket does not take now lws keeps and flushes before it closes.
            let written = lws_write(wsi, start, count, LWS_WRITE_HTTP_FINAL)
            if written < 0 { throw TransportError(.lwsCallFailed, "lws_write(refusal) returned \(written)") }
        }
    }

    // MARK: Client

    /// Adds headers to a client's upgrade request from CLIENT_APPEND_HANDSHAKE_HEADER, whose `in` is a
    /// `char **` cursor into lws's header buffer and `len` the room left.
    static func appendHandshakeHeaders(_ wsi: OpaquePointer, _ headers: [(String, String)], cursor: UnsafeMutableRawPointer?,
                                       remaining: Int) throws {
        guard let cursor else { throw TransportError(.lwsCallFailed, "no header cursor") }
        let position = cursor.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        guard let start = position.pointee else { throw TransportError(.lwsCallFailed, "no header buffer") }
        try addHeaders(wsi, headers, cursor: &position.pointee, end: start + remaining)
    }

    /// Adds `name: value` headers (names lower-cased) at `cursor`, which lws advances; a server
    /// response and a client's upgrade request both build their headers this way.
    private static func addHeaders(_ wsi: OpaquePointer, _ headers: [(String, String)], cursor: inout UnsafeMutablePointer<UInt8>?,
                                   end: UnsafeMutablePointer<UInt8>) throws {
        for (name, value) in headers {
            var nameBytes = Array((name.lowercased() + ":").utf8) + [0]
            var valueBytes = Array(value.utf8)
            if lws_add_http_header_by_name(wsi, &nameBytes, &valueBytes, Int32(valueBytes.count), &cursor, end) != 0 {
                throw TransportError(.lwsCallFailed, "header \(name) does not fit")
            }
        }
    }

    /// Starts a client connection; the outcome arrives later as CLIENT_ESTABLISHED or CLIENT_CONNECTION_ERROR.
    /// The C strings must stay valid until the connection is gone.
    /// `secure` asks for TLS with lws's full checks: chain to a trusted CA and the certificate naming `host`
    /// (none of the LCCSCF_ALLOW_* relaxations is ever set; a self-signed server needs its CA file instead).
    static func connect(context: OpaquePointer, host: UnsafePointer<CChar>, port: Int, path: UnsafePointer<CChar>,
                        hostHeader: UnsafePointer<CChar>, protocolName: UnsafePointer<CChar>, secure: Bool,
                        alpn: UnsafePointer<CChar>, id: UInt64) throws {
        var info = lws_client_connect_info()
        info.context = context
        info.address = host
        info.port = Int32(port)
        info.path = path
        info.host = hostHeader
        info.origin = hostHeader
        info.ietf_version_or_minus_one = -1
        info.local_protocol_name = protocolName
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: UInt(id))
        if secure {
            info.ssl_connection = Int32(LCCSCF_USE_SSL.rawValue)
            info.alpn = alpn // a WebSocket upgrade is an HTTP/1.1 exchange
        }
        guard lws_client_connect_via_info(&info) != nil else {
            throw TransportError(.lwsCallFailed, "lws_client_connect_via_info failed")
        }
    }
}

private extension String {
    func trimmingCharacters() -> String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}

extension LWS {
    /// lws's stock handler for reasons the transport does not handle itself (keeps default HTTP
    /// bookkeeping intact for protocols[0]).
    static func defaultCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                                _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        lws_callback_http_dummy(wsi, reason, user, input, length)
    }
}
