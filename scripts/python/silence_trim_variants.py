#!/usr/bin/env python3
"""Trimming rules for speakerkit's final turns, replayed on `speakersync-bench diarize --dump` files.

Each file's final turns and segmentation masks (from the dump) and its audio (for the loudness track,
as LoudnessTrack computes it: 10 ms blocks, pauses of at least 0.25 s, 25 dB under the loudest block
within 1 s) give the final hypothesis as speakerkit builds it (the turns plus the overlap pass's
spans, orphan voice included: missed_speech_breakdown.py's reconstruction), with the turns cut by:
  none        as they are (the bench's "with overlap and orphan voice" line, to the digit)
  loud        at their ends, where the loudness track hears a pause
  seg         at their ends, where the segmentation hears no local speaker
  both        at their ends, where both hear silence
  both+int    where both hear silence, at the ends and inside (turns split): what speakerkit does
DER collar 0.25 (pyannote.metrics, overlap scored), pooled over the files given.

Usage: silence_trim_variants.py REFERENCE.rttm UEM AUDIO_DIR DUMP.json...   (needs numpy, pyannote.metrics, sox)
"""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
from pyannote.core import Annotation, Segment, Timeline
from pyannote.metrics.diarization import DiarizationErrorRate

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location('breakdown', os.path.join(here, 'missed_speech_breakdown.py'))
breakdown = importlib.util.module_from_spec(spec)
spec.loader.exec_module(breakdown)


def hypothesis(dump, orphan_seconds=4.0):
    """The final turns and the overlap pass's spans (OverlapTurns.added with the orphan voice)."""
    turns = [(t['speaker'], t['start'], t['end']) for t in dump['turns']]
    added, orphans = [], []
    for window in dump['windows']:
        step, masks = window['step'], window['masks']
        centres = [window['first_centre'] + i * step for i in range(len(masks))]
        covering = [[s for s, a, b in turns if a <= t < b] for t in centres]
        names = breakdown.local_names(masks, covering)
        for frame, mask in enumerate(masks):
            locals_ = [k for k in range(8) if mask & (1 << k)]
            if len(locals_) >= 2:
                for k in locals_:
                    if k in names and names[k] not in covering[frame]:
                        added.append((names[k], centres[frame] - step / 2, centres[frame] + step / 2))
            if mask and (len(locals_) >= 2 or covering[frame]) and any(k not in names for k in locals_):
                orphans.append((centres[frame] - step / 2, centres[frame] + step / 2))
    if sum(b - a for a, b in orphans) >= orphan_seconds - 1e-9:
        added += [('orphan', a, b) for a, b in orphans]
    return turns, added


def loudness_pauses(path, minimum=0.25, drop=25.0, context=1.0):
    raw = subprocess.run(['sox', path, '-t', 'raw', '-e', 'float', '-b', '32', '-r', '16000', '-c', '1', '-'],
                         capture_output=True, check=True).stdout
    samples = np.frombuffer(raw, dtype=np.float32)
    count = len(samples) // 160
    blocks = samples[:count * 160].astype(np.float64).reshape(count, 160)
    mean_square = (blocks * blocks).mean(1)
    decibels = np.where(mean_square > 1e-12, 10 * np.log10(np.maximum(mean_square, 1e-300)), -120)
    levels = np.clip(np.round(decibels + 120), 0, 255)
    reach = int(round(context / 0.01))
    padded = np.concatenate([np.full(reach, -1.0), levels, np.full(reach, -1.0)])
    loudest = np.lib.stride_tricks.sliding_window_view(padded, 2 * reach + 1).max(1)
    return runs(levels < loudest - drop, 0.01, minimum)


def runs(flags, step, minimum):
    result, start = [], None
    for index, flag in enumerate(list(flags) + [False]):
        if flag and start is None:
            start = index
        elif not flag and start is not None:
            if (index - start) * step >= minimum - 1e-9:
                result.append((start * step, index * step))
            start = None
    return result


def model_silences(dump):
    result, open_ = [], None
    for window in sorted(dump['windows'], key=lambda w: w['first_centre']):
        half = window['step'] / 2
        for frame, mask in enumerate(window['masks']):
            start = window['first_centre'] + frame * window['step'] - half
            end = start + window['step']
            if mask == 0:
                open_ = (open_[0], end) if open_ and start <= open_[1] + 1e-6 else (result.append(open_) if open_ else None) or (start, end)
            elif open_:
                result.append(open_)
                open_ = None
    if open_:
        result.append(open_)
    return result


def intersect(a, b, minimum=0.25):
    result, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if end - start >= minimum - 1e-9:
            result.append((start, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return result


def cut(turns, silences, interior):
    result = []
    for speaker, start, end in turns:
        pieces, begin = [], start
        for s, e in silences:
            if e <= begin or s >= end:
                continue
            if s <= begin:
                begin = max(begin, e)
            elif e >= end:
                end = s
            elif interior:
                pieces.append((begin, s))
                begin = e
        pieces.append((begin, end))
        result += [(speaker, a, b) for a, b in pieces if b - a >= 0.05]
    return result


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    reference = breakdown.read_rttm(sys.argv[1])
    uem = {line.split()[0]: (float(line.split()[2]), float(line.split()[3])) for line in open(sys.argv[2])}
    variants = ['none', 'loud', 'seg', 'both', 'both+int']
    totals = {v: [0.0, 0.0] for v in variants}
    for path in sys.argv[4:]:
        dump = json.load(open(path))
        turns, added = hypothesis(dump)
        loud = loudness_pauses(os.path.join(sys.argv[3], dump['id'] + '.wav'))
        model = model_silences(dump)
        quiet = {'none': [], 'loud': loud, 'seg': [s for s in model if s[1] - s[0] >= 0.25], 'both': intersect(loud, model)}
        quiet['both+int'] = quiet['both']
        for variant in variants:
            metric = DiarizationErrorRate(collar=0.25, skip_overlap=False)
            ref, hyp = Annotation(), Annotation()
            for n, (s, a, b) in enumerate(reference[dump['id']]):
                ref[Segment(a, b), n] = s
            for n, (s, a, b) in enumerate(cut(turns, quiet[variant], variant == 'both+int') + added):
                if b > a:
                    hyp[Segment(a, b), n] = s
            detail = metric(ref, hyp, uem=Timeline([Segment(*uem[dump['id']])]), detailed=True)
            totals[variant][0] += detail['missed detection'] + detail['false alarm'] + detail['confusion']
            totals[variant][1] += detail['total']
    print(' | '.join(f"{v} {100 * e / max(t, 1e-9):.1f} %" for v, (e, t) in totals.items()))


if __name__ == '__main__':
    main()
