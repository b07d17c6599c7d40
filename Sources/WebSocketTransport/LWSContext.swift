import CLibWebSockets
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Owns one `lws_context` and the C memory lws keeps pointers into (protocol table, names, interface).
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
    }

    private let storage: Mutex<Storage>
    /// The context pointer; valid until `destroy()`.
    let pointer: OpaquePointer
    /// C string of `protocolName`, valid for the life of this object (clients pass it when connecting).
    let protocolNamePointer: UnsafePointer<CChar>

    /// - Parameters:
    ///   - port: nil for a client-only context.
    ///   - user: what `lws_context_user` returns in callbacks (the owning Swift core, unretained).
    ///   - extraProtocols: more subprotocol names served by the same callback (after `protocolName`,
    ///     which stays first: lws gives HTTP and upgrades that name no subprotocol to protocols[0]).
    ///   - timeouts: the server's handshake and keep-alive timeouts in seconds (nil: lws defaults).
    init(port: Int?, iface: String?, callback: LWS.Callback, rxBufferBytes: Int, user: UnsafeMutableRawPointer,
         extraProtocols: [String] = [], timeouts: (handshakeSeconds: Int, keepAliveSeconds: Int)? = nil) throws {
        let name = strdup(Self.protocolName)!
        let extraNames = extraProtocols.map { strdup($0)! }
        let ifaceCopy = iface.map { strdup($0)! }
        let protocols = LWS.makeProtocols(names: [UnsafePointer(name)] + extraNames.map { UnsafePointer($0) },
                                          callback: callback, rxBufferBytes: rxBufferBytes)
        var storage = Storage(context: nil, protocols: protocols, protocolCount: extraNames.count + 1, name: name,
                              extraNames: extraNames, iface: ifaceCopy)
        do {
            storage.context = try LWS.createContext(port: port, iface: ifaceCopy, protocols: protocols, user: user, timeouts: timeouts)
        } catch {
            Self.release(&storage)
            throw error
        }
        self.pointer = storage.context!
        self.protocolNamePointer = UnsafePointer(name)
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
        storage = Storage()
    }
}
