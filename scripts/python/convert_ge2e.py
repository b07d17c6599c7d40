#!/usr/bin/env python3
"""Converts Resemblyzer's GE2E speaker-encoder checkpoint (resemblyzer/pretrained.pt) into ge2e.bin,
a flat little-endian float32 file the Swift module SpeakerEmbedding reads without PyTorch.

The checkpoint is read with Python's own pickle module: a custom Unpickler maps the few PyTorch
globals it names (torch._utils._rebuild_tensor_v2, torch.FloatStorage, collections.OrderedDict, ...)
to small stand-ins and resolves storages through persistent_load, so no PyTorch (and no NumPy) is
needed. Both container formats torch.save has written are handled:
  - the legacy format (torch < 1.6; what resemblyzer 0.1.4 ships): four pickles back to back
    (magic number, protocol version, sys info, the object), then a pickle of the storage keys, then
    each storage's raw bytes in that order, each preceded by its element count as a little-endian int64;
  - the zip format (torch >= 1.6): <prefix>/data.pkl plus one file <prefix>/data/<key> per storage.
The older tar-based format (torch <= 0.1.10) is rejected with a message.

Only the network's tensors are written (lstm.* and linear.*); the checkpoint's GE2E training terms
(similarity_weight/bias), step counter and optimizer state are dropped.

ge2e.bin format, version 1 (all integers little-endian):
  offset 0   4 bytes   magic "GE2E"
  offset 4   u32       version (1)
  offset 8   u32       tensor count N
  offset 12  u32       CRC-32 (zlib polynomial) of the data region, bytes [data_start, end of file)
  offset 16  u32       data_start: where the data region begins (a multiple of 64)
  offset 20  N entries, each:
               u16 name length in bytes, then the UTF-8 name (e.g. "lstm.weight_ih_l0")
               u8  rank R, then R x u32 dimensions (PyTorch's shape, outermost first)
               u64 absolute byte offset of the tensor's first float32 (a multiple of 64)
             zero bytes up to data_start
  data region: each tensor's float32 values in C (row-major) order at its offset, zero padding
             between tensors up to the next multiple of 64; the file ends right after the last tensor.
Tensors written (PyTorch nn.LSTM naming, gate rows ordered i, f, g, o):
  lstm.weight_ih_l0 [1024, 40], lstm.weight_hh_l0 [1024, 256], lstm.bias_ih_l0 [1024], lstm.bias_hh_l0 [1024],
  the same for _l1 and _l2 with weight_ih [1024, 256], linear.weight [256, 256], linear.bias [256].

Usage:
  convert_ge2e.py pretrained.pt ge2e.bin    convert (writes atomically through a temporary file)
  convert_ge2e.py --check ge2e.bin          exit 0 if the file is a complete, valid version-1 file
"""
import array
import collections
import io
import os
import pickle
import struct
import sys
import zipfile
import zlib

MAGIC = b"GE2E"
VERSION = 1
ALIGN = 64
LEGACY_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C

# The tensors the encoder needs, with the shapes resemblyzer's VoiceEncoder has (hparams: 40 mel
# channels, 3 LSTM layers of 256, 256-dim embedding).
EXPECTED_SHAPES = collections.OrderedDict()
for _layer in range(3):
    EXPECTED_SHAPES[f"lstm.weight_ih_l{_layer}"] = (1024, 40 if _layer == 0 else 256)
    EXPECTED_SHAPES[f"lstm.weight_hh_l{_layer}"] = (1024, 256)
    EXPECTED_SHAPES[f"lstm.bias_ih_l{_layer}"] = (1024,)
    EXPECTED_SHAPES[f"lstm.bias_hh_l{_layer}"] = (1024,)
EXPECTED_SHAPES["linear.weight"] = (256, 256)
EXPECTED_SHAPES["linear.bias"] = (256,)

# Storage class name -> (struct/array type code, bytes per element).
STORAGE_TYPES = {
    "FloatStorage": ("f", 4),
    "DoubleStorage": ("d", 8),
    "HalfStorage": ("e", 2),
}


class ConversionError(Exception):
    pass


class StorageType:
    """Stands in for torch.FloatStorage and friends: only its name matters."""

    def __init__(self, name):
        self.name = name


class Storage:
    """A storage's raw bytes once read, plus the element type."""

    def __init__(self, type_name, element_count):
        if type_name not in STORAGE_TYPES:
            raise ConversionError(f"unsupported storage type {type_name}")
        self.type_name = type_name
        self.type_code, self.element_size = STORAGE_TYPES[type_name]
        self.element_count = element_count
        self.data = None  # bytes, filled after the object pickle has been read (legacy) or at once (zip)

    def values(self):
        if self.data is None:
            raise ConversionError("a storage's data was never read")
        if self.type_code == "e":
            return array.array("f", struct.unpack(f"<{self.element_count}e", self.data))
        values = array.array(self.type_code)
        values.frombytes(self.data)
        if sys.byteorder != "little":
            values.byteswap()
        return values if self.type_code == "f" else array.array("f", values)


class Tensor:
    """What torch._utils._rebuild_tensor_v2 would have built: a strided view into a storage."""

    def __init__(self, storage, storage_offset, size, stride):
        self.storage = storage
        self.storage_offset = storage_offset
        self.size = tuple(size)
        self.stride = tuple(stride)

    def contiguous_values(self):
        """The tensor's float32 values in C order, honouring offset and strides."""
        source = self.storage.values()
        count = 1
        for dim in self.size:
            count *= dim
        contiguous = [1] * len(self.size)
        for axis in range(len(self.size) - 2, -1, -1):
            contiguous[axis] = contiguous[axis + 1] * self.size[axis + 1]
        if tuple(contiguous) == self.stride or count <= 1:
            return source[self.storage_offset:self.storage_offset + count]
        result = array.array("f", bytes(4 * count))
        for flat in range(count):
            remainder, position = flat, self.storage_offset
            for axis in range(len(self.size) - 1, -1, -1):
                position += (remainder % self.size[axis]) * self.stride[axis]
                remainder //= self.size[axis]
            result[flat] = source[position]
        return result


def rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None):
    return Tensor(storage, storage_offset, size, stride)


def rebuild_parameter(data, requires_grad=False, backward_hooks=None, *rest):
    return data


class CheckpointUnpickler(pickle.Unpickler):
    """Resolves only the globals a state-dict checkpoint names; anything else is refused, so the
    file cannot run code."""

    def __init__(self, file, storages, legacy):
        super().__init__(file)
        self.storages = storages  # key -> Storage, shared with the caller
        self.legacy = legacy

    def find_class(self, module, name):
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch._utils" and name == "_rebuild_tensor_v2":
            return rebuild_tensor_v2
        if module == "torch._utils" and name == "_rebuild_parameter":
            return rebuild_parameter
        if module == "torch" and name.endswith("Storage"):
            return StorageType(name)
        raise ConversionError(f"the checkpoint names {module}.{name}, which a state dict should not need")

    def persistent_load(self, saved_id):
        kind = saved_id[0].decode("ascii") if isinstance(saved_id[0], bytes) else saved_id[0]
        if kind != "storage":
            raise ConversionError(f"unsupported persistent id {kind!r}")
        if self.legacy:
            storage_type, key, _location, element_count, view_metadata = saved_id[1:6]
        else:
            storage_type, key, _location, element_count = saved_id[1:5]
            view_metadata = None
        if view_metadata is not None:
            raise ConversionError("storage views (pre-0.4 checkpoints) are not supported")
        storage = self.storages.get(key)
        if storage is None:
            storage = Storage(storage_type.name, element_count)
            self.storages[key] = storage
        return storage


def load_legacy(file):
    magic = pickle.load(file)
    if magic != LEGACY_MAGIC_NUMBER:
        raise ConversionError("not a PyTorch checkpoint (wrong magic number)")
    protocol = pickle.load(file)
    if protocol != 1001:
        raise ConversionError(f"unsupported legacy protocol version {protocol}")
    sys_info = pickle.load(file)
    if not sys_info.get("little_endian", True):
        raise ConversionError("big-endian checkpoints are not supported")
    storages = {}
    checkpoint = CheckpointUnpickler(file, storages, legacy=True).load()
    keys = pickle.load(file)
    for key in keys:
        storage = storages.get(key)
        if storage is None:
            raise ConversionError(f"storage {key} is listed but was never referenced")
        header = file.read(8)
        if len(header) != 8:
            raise ConversionError("the checkpoint ends inside a storage header")
        (count,) = struct.unpack("<q", header)
        if count != storage.element_count:
            raise ConversionError(f"storage {key} holds {count} elements, the pickle said {storage.element_count}")
        storage.data = file.read(count * storage.element_size)
        if len(storage.data) != count * storage.element_size:
            raise ConversionError("the checkpoint ends inside a storage")
    return checkpoint


def load_zip(path):
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        pickles = [n for n in names if n.endswith("/data.pkl")]
        if not pickles:
            raise ConversionError("zip checkpoint without a data.pkl")
        prefix = pickles[0][: -len("data.pkl")]
        if prefix + "byteorder" in names and archive.read(prefix + "byteorder").strip() != b"little":
            raise ConversionError("big-endian checkpoints are not supported")
        storages = {}
        checkpoint = CheckpointUnpickler(io.BytesIO(archive.read(pickles[0])), storages, legacy=False).load()
        for key, storage in storages.items():
            storage.data = archive.read(f"{prefix}data/{key}")[: storage.element_count * storage.element_size]
    return checkpoint


def load_checkpoint(path):
    if zipfile.is_zipfile(path):
        return load_zip(path)
    with open(path, "rb") as file:
        head = file.read(512)
        if len(head) >= 262 and head[257:262] == b"ustar":
            raise ConversionError("tar-based checkpoints (torch <= 0.1.10) are not supported")
        file.seek(0)
        return load_legacy(file)


def state_dict(checkpoint):
    state = checkpoint.get("model_state", checkpoint) if isinstance(checkpoint, dict) else None
    if not isinstance(state, dict):
        raise ConversionError("the checkpoint holds no model_state dictionary")
    tensors = collections.OrderedDict()
    for name, shape in EXPECTED_SHAPES.items():
        tensor = state.get(name)
        if not isinstance(tensor, Tensor):
            raise ConversionError(f"the checkpoint has no tensor {name}")
        if tensor.size != shape:
            raise ConversionError(f"{name} has shape {list(tensor.size)}, expected {list(shape)}")
        tensors[name] = tensor
    return tensors


def aligned(value):
    return (value + ALIGN - 1) // ALIGN * ALIGN


def encode(tensors):
    """Builds the file's bytes from name -> Tensor."""
    entries_size = sum(2 + len(name.encode()) + 1 + 4 * len(t.size) + 8 for name, t in tensors.items())
    data_start = aligned(20 + entries_size)
    offsets, position = [], data_start
    for index, tensor in enumerate(tensors.values()):
        offsets.append(position)
        count = 1
        for dim in tensor.size:
            count *= dim
        end = position + 4 * count
        position = end if index == len(tensors) - 1 else aligned(end)
    data = bytearray()
    for offset, tensor in zip(offsets, tensors.values()):
        data.extend(bytes(offset - data_start - len(data)))
        values = tensor.contiguous_values()
        if sys.byteorder != "little":
            values.byteswap()
        data.extend(values.tobytes())
    entries = bytearray()
    for offset, (name, tensor) in zip(offsets, tensors.items()):
        encoded = name.encode()
        entries += struct.pack("<H", len(encoded)) + encoded
        entries += struct.pack("<B", len(tensor.size)) + struct.pack(f"<{len(tensor.size)}I", *tensor.size)
        entries += struct.pack("<Q", offset)
    header = MAGIC + struct.pack("<IIII", VERSION, len(tensors), zlib.crc32(data) & 0xFFFFFFFF, data_start)
    header += entries
    return header + bytes(data_start - len(header)) + bytes(data)


def check(path):
    """Returns None when the file is a complete version-1 file with every expected tensor, else why not."""
    try:
        with open(path, "rb") as file:
            blob = file.read()
    except OSError as error:
        return str(error)
    if len(blob) < 20 or blob[:4] != MAGIC:
        return "bad magic"
    version, count, crc, data_start = struct.unpack_from("<IIII", blob, 4)
    if version != VERSION:
        return f"version {version}"
    if data_start > len(blob) or zlib.crc32(blob[data_start:]) & 0xFFFFFFFF != crc:
        return "CRC mismatch or truncated"
    position, seen = 20, {}
    for _ in range(count):
        (length,) = struct.unpack_from("<H", blob, position)
        name = blob[position + 2:position + 2 + length].decode()
        position += 2 + length
        rank = blob[position]
        shape = struct.unpack_from(f"<{rank}I", blob, position + 1)
        (offset,) = struct.unpack_from("<Q", blob, position + 1 + 4 * rank)
        position += 1 + 4 * rank + 8
        elements = 1
        for dim in shape:
            elements *= dim
        if offset + 4 * elements > len(blob):
            return f"{name} runs past the end of the file"
        seen[name] = tuple(shape)
    for name, shape in EXPECTED_SHAPES.items():
        if seen.get(name) != shape:
            return f"{name} missing or of the wrong shape"
    return None


def main(argv):
    if len(argv) == 3 and argv[1] == "--check":
        problem = check(argv[2])
        if problem:
            print(f"convert_ge2e: {argv[2]} is not valid: {problem}", file=sys.stderr)
            return 1
        return 0
    if len(argv) != 3:
        print(__doc__.split("Usage:")[1].rstrip(), file=sys.stderr)
        return 2
    source, destination = argv[1], argv[2]
    try:
        blob = encode(state_dict(load_checkpoint(source)))
    except (ConversionError, pickle.UnpicklingError, EOFError, OSError) as error:
        print(f"convert_ge2e: cannot convert {source}: {error}", file=sys.stderr)
        return 1
    temporary = destination + ".partial"
    with open(temporary, "wb") as file:
        file.write(blob)
    os.replace(temporary, destination)
    problem = check(destination)
    if problem:
        print(f"convert_ge2e: wrote {destination} but it does not check: {problem}", file=sys.stderr)
        return 1
    print(f"convert_ge2e: wrote {destination} ({len(blob)} bytes, {len(EXPECTED_SHAPES)} tensors)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
