/// The figures the descriptor reports (`measured`), from `speakersync eval` and `speakersync-bench` on
/// this machine (docs/accuracy.md and docs/pyannote.md hold the commands).
enum PyannoteMeasurements {
    static let text = "not measured yet"
}
