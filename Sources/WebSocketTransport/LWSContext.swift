import CLibWebSockets
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TLS of a context, in Swift terms (`LWSContext` turns it into C strings it owns).
enum ContextTLS {
    case server(TLSFiles)
    /// nil: verify servers against the OS trust store.
    case client(caFilePath: String?)
}

/// Owns one `lws_context` and the C memory lws keeps pointers into (protocol table, names, interface,
/// TLS file paths and ALPN list).
///
/// Created on the caller's thread (so binding errors are thrown from `init`), destroyed exactly once:
/// by the service thread when its loop ends, by `shutdown` when no service thread ever ran, or by
/// `deinit` as the last resort — including when `lws_create_context` itself failed.
/// `@unchecked Sendable`: the pointers are immutable after init; what may be done with them from
/// which thread is the transport's rule (lws calls on the service thread, `lws_cancel_service` anywhere).
final class LWSContext: @unchecked Sendable {
    /// Name of the single protocol that handles HTTP and WebSocket (clients bind to it by this name).
    static let protocolName = "speakersync"

    private struct Storage: @unchecked Sendable { // raw pointers, guarded by the mutex below
        var context: OpaquePointer?
        var protocols: UnsafeMutablePointer<lws_protocols>?
        var protocolCount = 0
        var name: UnsafeMutablePointer<CChar>?
        var extraNames: [UnsafeMutablePointer<CChar>] = []
        var iface: UnsafeMutablePointer<CChar>?
        /// TLS paths and the ALPN list: lws reads the files during creation but keeps the ALPN pointer
        /// (context->tls.alpn_default), so all of them live as long as the context.
        var tlsStrings: [UnsafeMutablePointer<CChar>] = []
    }

    private let storage: Mutex<Storage>
    /// The context pointer; valid until `destroy()`.
    let pointer: OpaquePointer
    /// C string of `protocolName`, valid for the life of this object (clients pass it when connecting).
    let protocolNamePointer: UnsafePointer<CChar>
    /// "http/1.1", the ALPN list client connections offer (valid for the life of this object).
    let alpnPointer: UnsafePointer<CChar>

    /// - Parameters:
    ///   - port: nil for a client-only context.
    ///   - user: what `lws_context_user` returns in callbacks (the owning Swift core, unretained).
    ///   - tls: nil for a plaintext server; clients always pass `.client` so any connection may be wss://.
    ///   - extraProtocols: more subprotocol names served by the same callback (after `protocolName`,
    ///     which stays first: lws gives HTTP and upgrades that name no subprotocol to protocols[0]).
    ///   - timeouts: the server's handshake and keep-alive timeouts in seconds (nil: lws defaults).
    init(port: Int?, iface: String?, tls: ContextTLS?, callback: LWS.Callback, rxBufferBytes: Int,
         user: UnsafeMutableRawPointer, extraProtocols: [String] = [],
         timeouts: (handshakeSeconds: Int, keepAliveSeconds: Int)? = nil) throws {
        let name = strdup(Self.protocolName)!
        let extraNames = extraProtocols.map { strdup($0)! }
        let ifaceCopy = iface.map { strdup($0)! }
        let protocols = LWS.makeProtocols(names: [UnsafePointer(name)] + extraNames.map { UnsafePointer($0) },
                                          callback: callback, rxBufferBytes: rxBufferBytes)
        let alpn = strdup("http/1.1")!
        var storage = Storage(context: nil, protocols: protocols, protocolCount: extraNames.count + 1, name: name,
                              extraNames: extraNames, iface: ifaceCopy, tlsStrings: [alpn])
        let options: LWS.TLSOptions?
        switch tls {
        case .server(let files)?:
            let certificate = strdup(files.certificatePath)!
            let key = strdup(files.privateKeyPath)!
            storage.tlsStrings += [certificate, key]
            options = .server(certificate: certificate, privateKey: key, alpn: alpn)
        case .client(let caFilePath)?:
            let caFile = caFilePath.map { strdup($0)! }
            if let caFile { storage.tlsStrings.append(caFile) }
            options = .client(caFile: caFile, alpn: alpn)
        case nil:
            options = nil
        }
        do {
            if options == nil {
                storage.context = try LWS.createContext(port: port, iface: ifaceCopy, protocols: protocols, tls: nil, user: user,
                                                        timeouts: timeouts)
            } else {
                // TLS contexts are made with DO_SSL_GLOBAL_INIT, which disturbs client handshakes in flight.
                storage.context = try TLSHandshakeGate.creatingContext {
                    try LWS.createContext(port: port, iface: ifaceCopy, protocols: protocols, tls: options, user: user,
                                          timeouts: timeouts)
                }
            }
        } catch {
            Self.release(&storage)
            throw error
        }
        self.pointer = storage.context!
        self.protocolNamePointer = UnsafePointer(name)
        self.alpnPointer = UnsafePointer(alpn)
        self.storage = Mutex(storage)
    }

    /// Destroys the context (running the close callbacks of every open connection) and frees the
    /// C memory. Idempotent. Call on the service thread, or when no service thread is running.
    func destroy() {
        var taken = storage.withLock { storage -> Storage in
            let copy = storage
            storage = Storage()
            return copy
        }
        Self.release(&taken)
    }

    deinit { destroy() }

    private static func release(_ storage: inout Storage) {
        if let context = storage.context { LWS.destroyContext(context) }
        if let protocols = storage.protocols { LWS.freeProtocols(protocols, count: storage.protocolCount) }
        free(storage.name)
        storage.extraNames.forEach { free($0) }
        free(storage.iface)
        storage.tlsStrings.forEach { free($0) }
        storage = Storage()
    }
}
