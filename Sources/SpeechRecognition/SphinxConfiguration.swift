import CPocketSphinx

/// Owns one PocketSphinx `cmd_ln_t` and the argument strings it points into.
///
/// The strings are freed only after the config, and a `SphinxDecoder` keeps its configuration object
/// alive, because `ps_init` retains the same `cmd_ln_t` and reads it for as long as the decoder lives.
final class SphinxConfiguration {
    let raw: PocketSphinx.Config
    private let strings: [UnsafeMutablePointer<CChar>]

    /// - Parameter arguments: `-name value` pairs, e.g. `["-hmm", path, "-logfn", "/dev/null"]`.
    init(arguments: [String]) throws {
        (raw, strings) = try PocketSphinx.parseConfig(arguments)
    }

    deinit {
        PocketSphinx.freeConfig(raw)
        strings.forEach { free($0) }
    }
}
