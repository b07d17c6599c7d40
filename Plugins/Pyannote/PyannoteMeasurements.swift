/// The figures the descriptor reports (`measured`), from `speakersync eval` and `speakersync-bench
/// overlap` on this machine; docs/pyannote.md holds the commands and the sets (calibration, report).
enum PyannoteMeasurements {
    static let text = "DER (collar 0.25, sets never tuned on) synthetic 2 / 3 / 4 voices 0.7 / 26.6 / 24.5 %, fresh synthetic "
        + "0.3 / 29.7 / 23.2 %, ami-dev's 7 files held apart 27.8 % (all 11: 28.1 %), sample 3.5 %; first label p95 0.52 s at real time; "
        + "0.066 CPU s per audio s on one core (speakersync eval, speakersync-bench overlap; docs/pyannote.md)"
}
