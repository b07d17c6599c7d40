/// The figures the descriptor reports (`measured`), from `speakersync eval` on this machine with the
/// models docs/plugins.md names; they describe those models, not whichever the operator configures.
enum SherpaOnnxMeasurements {
    static let text = "not measured yet"
}
