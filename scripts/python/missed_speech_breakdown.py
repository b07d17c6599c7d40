#!/usr/bin/env python3
"""Where speakerkit's missed speech goes, from `speakersync-bench diarize --dump DIR` files.

For every 17 ms frame of the overlap pass's segmentation windows, the reference speakers talking are
compared with the final hypothesis: the turns plus what the overlap pass adds (OverlapTurns, re-done
here from the dumped masks and turns, orphan voice included). Reference speaker time left unmatched
(collar 0, counts only, no speaker mapping) is put in one of four bins:
  nothing            no turn and no local speaker (the VAD and the segmentation both hear silence)
  vad missed         no turn, but the segmentation hears someone
  seg hears fewer    the segmentation hears fewer voices than the reference has
  not added          the segmentation hears enough voices, but none was added (a local speaker unnamed)
Also printed: the reference's overlapped speech (speaker time beyond the first voice) and the seconds
of the orphan voice's frames (`*` when they reach its 4 s and the voice is made).

Usage: missed_speech_breakdown.py REFERENCE.rttm DUMP.json... [--windows]
"""
import collections
import json
import sys


def read_rttm(path):
    turns = collections.defaultdict(list)
    for line in open(path):
        fields = line.split()
        if fields and fields[0] == 'SPEAKER':
            start = float(fields[3])
            turns[fields[1]].append((fields[7], start, start + float(fields[4])))
    return turns


def talking(spans, t):
    return {speaker for speaker, start, end in spans if start <= t < end}


def local_names(masks, covering):
    """OverlapTurns.localNames: local speaker -> global, by solo frames under each speaker's turns."""
    evidence = collections.defaultdict(collections.Counter)
    for frame, mask in enumerate(masks):
        if mask and mask & (mask - 1) == 0:
            local = (mask & -mask).bit_length() - 1
            for speaker in set(covering[frame]):
                evidence[local][speaker] += 1
    pairs = [(count, -local, speaker, local) for local, counts in evidence.items() for speaker, count in counts.items()]
    pairs.sort(key=lambda p: (p[0], p[1]), reverse=True)
    names, taken = {}, set()
    for _, _, speaker, local in pairs:
        if local not in names and speaker not in taken:
            names[local] = speaker
            taken.add(speaker)
    return names


def breakdown(dump, reference, orphan_seconds=4.0):
    turns = [(t['speaker'], t['start'], t['end']) for t in dump['turns']]
    added, orphans, per_window = [], [], []
    for window in dump['windows']:
        step, masks = window['step'], window['masks']
        centres = [window['first_centre'] + i * step for i in range(len(masks))]
        covering = [[s for s, a, b in turns if a <= t < b] for t in centres]
        names = local_names(masks, covering)
        unnamed = collections.Counter()
        for frame, mask in enumerate(masks):
            locals_ = [k for k in range(8) if mask & (1 << k)]
            present = covering[frame]
            if len(locals_) >= 2:
                for k in locals_:
                    if k in names and names[k] not in present:
                        added.append((names[k], centres[frame] - step / 2, centres[frame] + step / 2))
            if mask and (len(locals_) >= 2 or present) and any(k not in names for k in locals_):
                orphans.append(centres[frame])
                for k in locals_:
                    if k not in names:
                        unnamed[k] += step
        per_window.append((window['first_centre'], dict(unnamed), names))
    step = dump['windows'][0]['step'] if dump['windows'] else 0
    orphan_total = len(orphans) * step
    made = orphan_total >= orphan_seconds
    hypothesis = turns + added + ([('orphan', t - step / 2, t + step / 2) for t in orphans] if made else [])
    bins = collections.Counter()
    for window in dump['windows']:
        step = window['step']
        for frame, mask in enumerate(window['masks']):
            t = window['first_centre'] + frame * step
            expected = len(talking(reference, t))
            if expected == 0:
                continue
            bins['reference'] += expected * step
            bins['overlapped'] += max(0, expected - 1) * step
            found = len(talking(hypothesis, t))
            if found >= expected:
                continue
            missed = (expected - found) * step
            if found == 0:
                bins['vad missed' if mask else 'nothing'] += missed
            elif bin(mask).count('1') < expected:
                bins['seg hears fewer'] += missed
            else:
                bins['not added'] += missed
    return bins, orphan_total, made, per_window


def line(name, bins, extra=''):
    keys = ['reference', 'overlapped', 'nothing', 'vad missed', 'seg hears fewer', 'not added']
    return f"{name}: " + ', '.join(f"{k} {bins[k]:.1f} s" for k in keys) + extra


def main():
    arguments = [a for a in sys.argv[1:] if a != '--windows']
    if len(arguments) < 2:
        sys.exit(__doc__)
    reference = read_rttm(arguments[0])
    total = collections.Counter()
    for path in arguments[1:]:
        dump = json.load(open(path))
        bins, orphan_total, made, per_window = breakdown(dump, reference[dump['id']])
        total.update(bins)
        print(line(dump['id'], bins, f", orphan frames {orphan_total:.1f} s{' *' if made else ''}"))
        if '--windows' in sys.argv:
            for start, unnamed, names in per_window:
                print(f"  window at {start:.0f} s: unnamed local speakers' seconds {unnamed}, names {names}")
    print(line('total', total))


if __name__ == '__main__':
    main()
