import CBLAS
import Foundation

/// The one file of raw OpenBLAS calls. CBLAS reports nothing back (no handles, no status codes), so
/// this file only pins the layout conventions the encoder uses and sets OpenBLAS up once: one thread,
/// and kernels that match the CPU.
enum BLAS {
    /// What `configure()` found and changed.
    struct Setup: Sendable {
        /// The kernel set OpenBLAS uses ("SkylakeX", "Haswell", …).
        var coreName: String
        /// The kernel set OpenBLAS had picked itself, when `configure` replaced it.
        var replacedCoreName: String?
    }

    private static let setup: Setup = {
        // Sessions already run in parallel on their own queues; OpenBLAS threads would only fight
        // them for the same cores.
        openblas_set_num_threads(1)
        let chosen = String(cString: openblas_get_corename())
        guard chosen.lowercased() == "prescott", ProcessInfo.processInfo.environment["OPENBLAS_CORETYPE"] == nil,
              let better = kernelSetForThisCPU(), reselectCore(better)
        else { return Setup(coreName: chosen) }
        return Setup(coreName: String(cString: openblas_get_corename()), replacedCoreName: chosen)
    }()

    static func configure() -> Setup { setup }

    /// Debian bookworm's OpenBLAS 0.3.21 picks its kernels by CPU model number and does not know
    /// recent Xeons (e.g. family 6 model 207): it falls back to "Prescott" SSE3 kernels, 4–5× slower
    /// at sgemm than the AVX-512 ones the same CPU runs fine. Its own remedy is the environment variable
    /// OPENBLAS_CORETYPE, read when the library initialises, i.e. before any Swift code runs; so, when
    /// the user has not set it, this redoes that initialisation step (the exported
    /// gotoblas_dynamic_quit/gotoblas_dynamic_init of DYNAMIC_ARCH builds) with the variable set for
    /// the duration. Returns false when the library has no such functions (a build for one CPU).
    private static func reselectCore(_ coreType: String) -> Bool {
        guard let library = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD) else { return false }
        defer { dlclose(library) }
        guard let quit = dlsym(library, "gotoblas_dynamic_quit"), let initialise = dlsym(library, "gotoblas_dynamic_init") else {
            return false
        }
        typealias Entry = @convention(c) () -> Void
        setenv("OPENBLAS_CORETYPE", coreType, 1)
        defer { unsetenv("OPENBLAS_CORETYPE") }
        unsafeBitCast(quit, to: Entry.self)()
        unsafeBitCast(initialise, to: Entry.self)()
        return true
    }

    /// The OpenBLAS kernel set the CPU's advertised features can run: SkylakeX needs AVX-512
    /// F/CD/BW/DQ/VL, Haswell needs AVX2 and FMA.
    private static func kernelSetForThisCPU() -> String? {
        guard let cpuinfo = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let flagsLine = cpuinfo.split(separator: "\n").first(where: { $0.hasPrefix("flags") })
        else { return nil }
        let flags = Set(flagsLine.split(separator: " ").map(String.init))
        if flags.isSuperset(of: ["avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"]) { return "SkylakeX" }
        if flags.isSuperset(of: ["avx2", "fma"]) { return "Haswell" }
        return nil
    }

    /// c[m×n] = a[m×k] · b[k×n] + beta · c, all row-major with the given leading dimensions. The
    /// encoder keeps its weights transposed ([in × out]) for this form: OpenBLAS packs an untransposed
    /// right operand faster, which matters for the small per-time-step products.
    static func multiply(
        _ a: UnsafePointer<Float>, rows m: Int, inner k: Int, leadingA: Int,
        _ b: UnsafePointer<Float>, columns n: Int, leadingB: Int,
        into c: UnsafeMutablePointer<Float>, leadingC: Int, beta: Float
    ) {
        cblas_sgemm(
            CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(m), blasint(n), blasint(k),
            1, a, blasint(leadingA), b, blasint(leadingB), beta, c, blasint(leadingC))
    }
}
