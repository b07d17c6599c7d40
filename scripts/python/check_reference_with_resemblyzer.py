#!/usr/bin/env python3
"""A one-off check, run by hand, that ge2e_reference.py (the NumPy reference the Swift tests compare
with) computes what resemblyzer itself computes with PyTorch and librosa. Not part of scripts/test:
it needs torch, librosa and resemblyzer, which the project does not install.

  python3 -m venv /tmp/rzvenv && /tmp/rzvenv/bin/pip install torch librosa soundfile
  /tmp/rzvenv/bin/pip install --no-deps resemblyzer==0.1.4
  /tmp/rzvenv/bin/python scripts/python/check_reference_with_resemblyzer.py vendor/models/ge2e.bin \
      A.wav[:START:END] [B.wav ...]

Inputs are 16 kHz WAV files, optionally cut to START..END seconds. Each is volume-normalised as
resemblyzer's preprocess_wav does (its webrtcvad trimming is skipped, as in SpeakerEmbedding; a stub
module stands in for webrtcvad) and embedded with VoiceEncoder.embed_utterance, twice: with librosa's
installed default STFT padding (zeros since librosa 0.10) and with the reflect padding the weights were
trained with. Prints the cosine of each utterance and its partial embeddings against the reference.
"""
import json
import os
import subprocess
import sys
import tempfile
import types

import numpy as np

sys.modules.setdefault("webrtcvad", types.ModuleType("webrtcvad"))
import librosa  # noqa: E402
from resemblyzer import VoiceEncoder  # noqa: E402
from resemblyzer.audio import normalize_volume  # noqa: E402
import soundfile  # noqa: E402


def cosine(a, b):
    return float(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b))


def read(spec):
    """PATH or PATH:START:END (seconds) -> float32 samples."""
    path, _, cut = spec.partition(":")
    samples, rate = soundfile.read(path, dtype="float32")
    if rate != 16000:
        sys.exit(f"{path} is {rate} Hz; the encoder needs 16 kHz")
    if cut:
        start, end = (float(x) for x in cut.split(":"))
        samples = samples[int(start * rate):int(end * rate)]
    return samples


def main():
    model, specs = sys.argv[1], sys.argv[2:]
    folder = tempfile.mkdtemp()
    files = []
    for index, spec in enumerate(specs):
        files.append(os.path.join(folder, f"{index}.f32"))
        read(spec).astype("<f4").tofile(files[-1])
    reference_script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ge2e_reference.py")
    arguments = [sys.executable, reference_script, "--model", model] + sum([["--utterance", f] for f in files], [])
    reference = json.loads(subprocess.check_output(arguments))["utterances"]
    encoder = VoiceEncoder(device="cpu", verbose=False)
    melspectrogram = librosa.feature.melspectrogram
    for padding in (f"librosa {librosa.__version__} default padding", "reflect padding"):
        if padding == "reflect padding":
            librosa.feature.melspectrogram = lambda **kw: melspectrogram(pad_mode="reflect", **kw)
        for spec, path, theirs in zip(specs, files, reference):
            wav = normalize_volume(np.fromfile(path, dtype="<f4"), -30, increase_only=True)
            embedding, partials, slices = encoder.embed_utterance(wav, return_partials=True)
            partial_cosines = [cosine(a, b) for a, b in zip(partials, theirs["partials"])]
            same_slices = [[s.start, s.stop] for s in slices] == theirs["partial_sample_ranges"]
            print(f"{padding}: {os.path.basename(spec)} ({len(wav)} samples): utterance cosine "
                  f"{cosine(embedding, theirs['embedding']):.7f}, lowest of {len(partials)} partial cosines "
                  f"{min(partial_cosines):.7f}, same partial windows: {same_slices}")


if __name__ == "__main__":
    main()
