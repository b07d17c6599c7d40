#if canImport(Glibc)
import Glibc
#endif
import CPicovoiceFalcon
import Synchronization

/// libpv_falcon opened with dlopen: every raw call into Picovoice's C API is here, statuses turned into
/// thrown `FalconError`s with Picovoice's message stack. Why dlopen: the package builds and every other
/// provider works without the vendored library (scripts/setup fetches it from PyPI `pvfalcon`).
///
/// Immutable after load; the functions are safe from any thread except that one engine object is used
/// by one thread at a time (`FalconEngine`'s rule). The handle is never closed (RTLD_NODELETE): engines
/// may outlive a registry.
public final class FalconLibrary: Sendable {
    public let path: String
    public let version: String
    public let sampleRate: Int
    let initialize: pv_falcon_init_fn
    let delete: pv_falcon_delete_fn
    let process: pv_falcon_process_fn
    let deleteSegments: pv_falcon_segments_delete_fn
    private let statusToString: pv_status_to_string_fn
    private let getErrorStack: pv_get_error_stack_fn
    private let freeErrorStack: pv_free_error_stack_fn

    private static let loaded = Mutex<[String: FalconLibrary]>([:])

    /// The library at `path`, opened once per process.
    public static func load(path: String) throws(FalconError) -> FalconLibrary {
        try loaded.withLock { (libraries) throws(FalconError) -> FalconLibrary in
            if let library = libraries[path] { return library }
            let library = try FalconLibrary(path: path)
            libraries[path] = library
            return library
        }
    }

    private init(path: String) throws(FalconError) {
        self.path = path
        _ = dlerror()
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            throw FalconError(.libraryNotFound, "cannot open the Falcon library \(path): \(reason)")
        }
        func symbol<T>(_ name: String, as type: T.Type) throws(FalconError) -> T {
            guard let address = dlsym(handle, name) else {
                throw FalconError(.symbolMissing, "\(path) has no \(name): not Picovoice Falcon 2.x")
            }
            return unsafeBitCast(address, to: type)
        }
        initialize = try symbol("pv_falcon_init", as: pv_falcon_init_fn.self)
        delete = try symbol("pv_falcon_delete", as: pv_falcon_delete_fn.self)
        process = try symbol("pv_falcon_process", as: pv_falcon_process_fn.self)
        deleteSegments = try symbol("pv_falcon_segments_delete", as: pv_falcon_segments_delete_fn.self)
        statusToString = try symbol("pv_status_to_string", as: pv_status_to_string_fn.self)
        getErrorStack = try symbol("pv_get_error_stack", as: pv_get_error_stack_fn.self)
        freeErrorStack = try symbol("pv_free_error_stack", as: pv_free_error_stack_fn.self)
        let versionFunction = try symbol("pv_falcon_version", as: pv_falcon_version_fn.self)
        let sampleRateFunction = try symbol("pv_sample_rate", as: pv_sample_rate_fn.self)
        version = versionFunction().map { String(cString: $0) } ?? "unknown"
        sampleRate = Int(sampleRateFunction())
    }

    /// Picovoice's name of a status ("INVALID_ARGUMENT").
    func name(of status: pv_status_t) -> String {
        statusToString(status).map { String(cString: $0) } ?? "status \(status)"
    }

    /// Throws the error of a failed call, with the calling thread's message stack.
    func check(_ status: pv_status_t, _ call: String) throws(FalconError) {
        guard let code = FalconError.Code(status: status) else { return }
        throw FalconError(code, "\(call) failed: \(name(of: status))", stack: errorStack())
    }

    /// The messages of the last failure on this thread (empty if Picovoice has none).
    func errorStack() -> [String] {
        var messages: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        var depth: Int32 = 0
        guard getErrorStack(&messages, &depth) == 0, let messages else { return [] }
        defer { freeErrorStack(messages) }
        return (0 ..< Int(max(0, depth))).compactMap { messages[$0].map { String(cString: $0) } }
    }
}
