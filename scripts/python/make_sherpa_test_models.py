#!/usr/bin/env python3
"""Tiny ONNX models that sherpa-onnx 2.0.1's speaker loaders accept, for the tests (no torch needed:
only the `onnx` and `numpy` packages of .venv-test).

They are not trained: their outputs mean little, but they have the metadata keys, input and output
names, shapes and types the loaders read (offline-speaker-segmentation-pyannote-model.cc,
speaker-embedding-extractor-general-impl.h), so the real library loads and runs them end to end.

  segmentation.onnx   x [N, 1, T] -> y [N, F, 7]: a pyannote-style powerset over 3 speakers; class 1
                      (speaker 0 alone) wins where the signal is loud, class 0 (nobody) elsewhere.
                      F = floor((T - 991) / 270) + 1, as segmentation-3.0 has it.
  embedding.onnx      feats [B, T, 80] -> embs [B, 64] (WeSpeaker layout): the time-average of the log
                      mel energies, centred across bins, its peaks kept (the spectrum's shape, not its
                      level), then a fixed random projection. Two voices with different spectra get
                      different embeddings; one voice gets nearly the same one every time.
  embedding-3dspeaker.onnx  the same graph in the 3D-Speaker layout, whose global-mean feature
                      normalisation takes the time-average away: it loads and runs, but tells voices
                      apart poorly (the tests use it for loading only).
  bad-*.onnx          models the checks must refuse before sherpa-onnx sees them (it would end the process).

Usage: make_sherpa_test_models.py OUT_DIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
IR_VERSION = 8


def save(graph, metadata, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="speakersync-tests")
    model.ir_version = IR_VERSION
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, str(value)
    onnx.checker.check_model(model)
    onnx.save(model, path)


def segmentation(path, omit=None, classes=7):
    speakers, receptive_size, receptive_shift = 3, 991, 270
    weights = np.zeros((classes, 1, receptive_size), dtype=np.float32)
    bias = np.full((classes,), -10.0, dtype=np.float32)
    weights[1, 0, :] = 1.0 / receptive_size   # speaker 0's score: mean energy over the receptive field
    bias[0] = 0.0
    bias[1] = -1e-4                            # ... above this, speaker 0; below, nobody
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, "T"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "F", classes])
    nodes = [
        helper.make_node("Mul", ["x", "x"], ["energy"]),
        helper.make_node("Conv", ["energy", "W", "B"], ["scores"], kernel_shape=[receptive_size], strides=[receptive_shift]),
        helper.make_node("Transpose", ["scores"], ["frames"], perm=[0, 2, 1]),
        helper.make_node("LogSoftmax", ["frames"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(nodes, "test_segmentation", [x], [y],
                              initializer=[numpy_helper.from_array(weights, "W"), numpy_helper.from_array(bias, "B")])
    metadata = {"sample_rate": 16000, "window_size": 160000, "receptive_field_size": receptive_size,
                "receptive_field_shift": receptive_shift, "num_speakers": speakers, "powerset_max_classes": 2,
                "num_classes": 7, "model_type": "pyannote-segmentation-3.0 (test stand-in)"}
    if omit:
        metadata.pop(omit)
    save(graph, metadata, path)


def embedding(path, dimension=64, framework="wespeaker", omit=None, declared_dimension=None):
    rng = np.random.default_rng(7)
    projection = rng.standard_normal((80, dimension)).astype(np.float32)
    feats = helper.make_tensor_value_info("feats", TensorProto.FLOAT, ["B", "T", 80])
    embs = helper.make_tensor_value_info("embs", TensorProto.FLOAT, ["B", dimension])
    nodes = [
        helper.make_node("ReduceMean", ["feats"], ["spectrum"], axes=[1], keepdims=0),
        helper.make_node("ReduceMean", ["spectrum"], ["level"], axes=[1], keepdims=1),
        helper.make_node("Sub", ["spectrum", "level"], ["shape"]),
        helper.make_node("Relu", ["shape"], ["peaks"]),   # only the bins above the average: where voices differ
        helper.make_node("MatMul", ["peaks", "P"], ["embs"]),
    ]
    graph = helper.make_graph(nodes, "test_embedding", [feats], [embs], initializer=[numpy_helper.from_array(projection, "P")])
    metadata = {"framework": framework, "language": "English", "sample_rate": 16000,
                "output_dim": declared_dimension or dimension, "normalize_samples": 0 if framework == "wespeaker" else 1,
                "comment": "test stand-in, not a trained model"}
    if framework == "3d-speaker":
        metadata["feature_normalize_type"] = "global-mean"
    if omit:
        metadata.pop(omit)
    save(graph, metadata, path)


def main(out):
    segmentation(f"{out}/segmentation.onnx")
    embedding(f"{out}/embedding.onnx")
    embedding(f"{out}/embedding-3dspeaker.onnx", dimension=48, framework="3d-speaker")
    segmentation(f"{out}/bad-segmentation-no-num-classes.onnx", omit="num_classes")
    segmentation(f"{out}/bad-segmentation-wrong-classes.onnx", classes=5)
    embedding(f"{out}/bad-embedding-no-framework.onnx", omit="framework")
    embedding(f"{out}/bad-embedding-dimension.onnx", declared_dimension=128)
    with open(f"{out}/bad-not-onnx.onnx", "wb") as handle:
        handle.write(b"this is not a protobuf model\n")


if __name__ == "__main__":
    main(sys.argv[1])
