#!/usr/bin/env python3
"""An independent NumPy implementation of resemblyzer's GE2E speaker encoder, used by
Tests/SpeakerEmbeddingTests to check the Swift module SpeakerEmbedding on real audio.

It shares nothing with the Swift code but the weights file: its own ge2e.bin parser, float64
arithmetic throughout, numpy.fft.rfft for the 400-point STFT, the mel filters built with librosa's
formulas (librosa itself is not needed), numpy.tanh and exp for the gates. The steps follow
resemblyzer 0.1.4 (audio.py, voice_encoder.py): volume normalisation to -30 dBFS (increase only;
webrtcvad trimming skipped, as the Swift module does), center=True STFT with reflect padding,
40 Slaney mel bands of the power spectrum, 3-layer LSTM, Linear + ReLU, L2 norm, and
embed_utterance's partial windows (rate 1.3/s, min_coverage 0.75).

Input files hold raw little-endian float32 samples at 16 kHz.
  ge2e_reference.py --model ge2e.bin [--utterance A.f32]... [--window B.f32]... [--no-normalize]
prints JSON: {"utterances": [{"embedding": [...256], "partials": [[...256], ...],
              "partial_sample_ranges": [[start, stop], ...]}], "windows": [[...256], ...]}
--utterance embeds like embed_utterance; --window embeds the file as one partial from its own
len//160 mel frames (the Swift `embed(sampleWindows:)`).
"""
import argparse
import json
import struct
import sys
import zlib

import numpy as np

SAMPLE_RATE = 16000
N_FFT = 400
HOP = 160
N_MELS = 40
PARTIAL_FRAMES = 160
INT16_MAX = 2 ** 15 - 1


def load_weights(path):
    blob = open(path, "rb").read()
    if blob[:4] != b"GE2E":
        sys.exit(f"ge2e_reference: {path} is not a GE2E file")
    version, count, crc, data_start = struct.unpack_from("<IIII", blob, 4)
    if version != 1 or zlib.crc32(blob[data_start:]) & 0xFFFFFFFF != crc:
        sys.exit(f"ge2e_reference: {path} has version {version} or a bad checksum")
    position, tensors = 20, {}
    for _ in range(count):
        (length,) = struct.unpack_from("<H", blob, position)
        name = blob[position + 2:position + 2 + length].decode()
        position += 2 + length
        rank = blob[position]
        shape = struct.unpack_from(f"<{rank}I", blob, position + 1)
        (offset,) = struct.unpack_from("<Q", blob, position + 1 + 4 * rank)
        position += 1 + 4 * rank + 8
        size = int(np.prod(shape))
        tensors[name] = np.frombuffer(blob, dtype="<f4", count=size, offset=offset).reshape(shape).astype(np.float64)
    return tensors


def normalize_volume(wav, target_dbfs=-30.0):
    rms = np.sqrt(np.mean((wav.astype(np.float64) * INT16_MAX) ** 2))
    if rms == 0:
        return wav
    change = target_dbfs - 20 * np.log10(rms / INT16_MAX)
    return wav if change < 0 else wav * (10 ** (change / 20))


def hz_to_mel(f):
    f = np.asarray(f, dtype=np.float64)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    logstep = np.log(6.4) / 27.0
    return np.where(f >= min_log_hz, min_log_hz / f_sp + np.log(np.maximum(f, 1e-10) / min_log_hz) / logstep, f / f_sp)


def mel_to_hz(m):
    m = np.asarray(m, dtype=np.float64)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    return np.where(m >= min_log_mel, min_log_hz * np.exp(logstep * (m - min_log_mel)), f_sp * m)


def mel_filters():
    fft_freqs = np.fft.rfftfreq(N_FFT, d=1.0 / SAMPLE_RATE)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(SAMPLE_RATE / 2), N_MELS + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fft_freqs)
    weights = np.zeros((N_MELS, len(fft_freqs)))
    for i in range(N_MELS):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2:N_MELS + 2] - mel_f[:N_MELS]))[:, np.newaxis]
    return weights


MEL_FILTERS = mel_filters()
HANN = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)


def mel_spectrogram(wav, frame_count=None):
    """[frames, 40] mel power, frame t centred on sample 160 t (reflect padding)."""
    padded = np.pad(wav.astype(np.float64), N_FFT // 2, mode="reflect")
    total = 1 + len(wav) // HOP
    frame_count = total if frame_count is None else frame_count
    frames = np.stack([padded[t * HOP:t * HOP + N_FFT] for t in range(frame_count)])
    power = np.abs(np.fft.rfft(frames * HANN, n=N_FFT, axis=1)) ** 2
    return power @ MEL_FILTERS.T


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def embed_partials(weights, mels):
    """mels: [batch, frames, 40] -> [batch, 256] (VoiceEncoder.forward)."""
    x = mels
    batch = x.shape[0]
    for layer in range(3):
        w_ih, w_hh = weights[f"lstm.weight_ih_l{layer}"], weights[f"lstm.weight_hh_l{layer}"]
        bias = weights[f"lstm.bias_ih_l{layer}"] + weights[f"lstm.bias_hh_l{layer}"]
        h = np.zeros((batch, 256))
        c = np.zeros((batch, 256))
        outputs = []
        projected = x @ w_ih.T + bias
        for t in range(x.shape[1]):
            g = projected[:, t] + h @ w_hh.T
            i, f, cand, o = sigmoid(g[:, :256]), sigmoid(g[:, 256:512]), np.tanh(g[:, 512:768]), sigmoid(g[:, 768:])
            c = f * c + i * cand
            h = o * np.tanh(c)
            outputs.append(h)
        x = np.stack(outputs, axis=1)
    raw = np.maximum(0, x[:, -1] @ weights["linear.weight"].T + weights["linear.bias"])
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def partial_slices(n_samples, rate=1.3, min_coverage=0.75):
    """resemblyzer's VoiceEncoder.compute_partial_slices, returning mel-frame starts."""
    n_frames = int(np.ceil((n_samples + 1) / HOP))
    frame_step = int(np.round((SAMPLE_RATE / rate) / HOP))
    steps = max(1, n_frames - PARTIAL_FRAMES + frame_step + 1)
    starts = list(range(0, steps, frame_step))
    coverage = (n_samples - starts[-1] * HOP) / (PARTIAL_FRAMES * HOP)
    if coverage < min_coverage and len(starts) > 1:
        starts = starts[:-1]
    return starts


def embed_utterance(weights, wav, normalize):
    if normalize:
        wav = normalize_volume(wav)
    starts = partial_slices(len(wav))
    stop = (starts[-1] + PARTIAL_FRAMES) * HOP
    if stop >= len(wav):
        wav = np.pad(wav, (0, stop - len(wav)), "constant")
    mel = mel_spectrogram(wav)
    partials = embed_partials(weights, np.stack([mel[s:s + PARTIAL_FRAMES] for s in starts]))
    mean = partials.mean(axis=0)
    return {
        "embedding": (mean / np.linalg.norm(mean)).tolist(),
        "partials": partials.tolist(),
        "partial_sample_ranges": [[s * HOP, (s + PARTIAL_FRAMES) * HOP] for s in starts],
    }


def embed_window(weights, wav, normalize):
    if normalize:
        wav = normalize_volume(wav)
    mel = mel_spectrogram(wav, frame_count=len(wav) // HOP)
    return embed_partials(weights, mel[np.newaxis])[0].tolist()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--utterance", action="append", default=[])
    parser.add_argument("--window", action="append", default=[])
    parser.add_argument("--no-normalize", action="store_true")
    args = parser.parse_args()
    weights = load_weights(args.model)
    read = lambda path: np.fromfile(path, dtype="<f4")
    result = {
        "utterances": [embed_utterance(weights, read(p), not args.no_normalize) for p in args.utterance],
        "windows": [embed_window(weights, read(p), not args.no_normalize) for p in args.window],
    }
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
