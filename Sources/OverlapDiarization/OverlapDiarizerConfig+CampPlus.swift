extension OverlapDiarizerConfig {
    /// The distances for 3D-Speaker CAM++ (zh/en common advanced, the model scripts/setup installs),
    /// set on the calibration meetings only (docs/pyannote.md, "Calibration"): never on a set whose
    /// figures are reported.
    public static let campPlus: OverlapDiarizerConfig = {
        var config = OverlapDiarizerConfig.default
        config.newSpeakerDistance = 0.6
        config.finalDistance = 0.35
        config.enrolledDistance = 0.45
        return config
    }()
}
