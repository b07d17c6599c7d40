/// The figures the descriptor reports (`measured`), from `speakersync eval` on this machine with the
/// reference models docs/sherpa-onnx.md names (rebuilt from PyPI by scripts/python/build_reference_models.py);
/// they describe those models, not whichever the operator configures.
enum SherpaOnnxMeasurements {
    static let text = "with pyannote segmentation-3.0 + 3D-Speaker CAM++ (scripts/python/build_reference_models.py): DER (collar 0.25) "
        + "synthetic 2 / 3 / 4 voices 0.0 / 3.3 / 7.8 %, fresh synthetic 1.1 / 10.9 / 13.0 %, ami-dev 25.4 %, sample 1.3 %; "
        + "real-time factor 0.11 with the offline pass; first label p95 0.23 s at real time, final revision 2.5 s after the end "
        + "(speakersync eval; docs/accuracy.md). Other models: speakersync eval --provider sherpa-onnx --provider-config FILE"
}
