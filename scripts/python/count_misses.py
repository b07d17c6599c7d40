#!/usr/bin/env python3
"""Who the speaker count misses: for each recording of a `speakersync eval --json` report, the speakers
found against the reference's, and each reference speaker's talk time (seconds of speech, overlap
counted for everyone talking), most talkative first. The speakers past the count found are marked `*`:
the ones a count that keeps the most talkative people would leave out (the scorer's mapping may pair
differently; this is about how much there was to find).

Then, for thresholds T, on how many recordings the count would be exact if the reference left out its
speakers with under T s of speech: what the count goal asks of a diarizer that cannot count someone
who says a word or two.

Usage: count_misses.py REFERENCE.rttm EVAL.json
"""
import collections
import json
import sys


def overlap_seconds(start, end, others):
    """Seconds of [start, end) during which at least one of `others` (start, end) is talking."""
    cuts = sorted((max(a, start), min(b, end)) for a, b in others if a < end and b > start)
    total, reach = 0.0, start
    for a, b in cuts:
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    turns = collections.defaultdict(list)  # recording → [(speaker, start, end)]
    with open(sys.argv[1], encoding="utf-8") as handle:
        for line in handle:
            fields = line.split()
            if len(fields) >= 8 and fields[0] == "SPEAKER":
                start = float(fields[3])
                turns[fields[1]].append((fields[7], start, start + float(fields[4])))
    talk = collections.defaultdict(lambda: collections.defaultdict(float))  # recording → speaker → seconds
    for recording, spans in turns.items():
        for who, start, end in spans:
            talk[recording][who] += end - start
    with open(sys.argv[2], encoding="utf-8") as handle:
        files = json.load(handle)["files"]
    exact = 0
    missed = []
    missed_turns = []
    overlapped = 0.0
    for entry in files:
        found, reference = entry["speakers_found"], entry["speakers_reference"]
        ranked = sorted(talk[entry["id"]], key=lambda name: -talk[entry["id"]][name])
        seconds = [talk[entry["id"]][name] for name in ranked]
        exact += found == reference
        missed += seconds[found:]
        for name in ranked[found:]:
            own = [(a, b) for who, a, b in turns[entry["id"]] if who == name]
            others = [(a, b) for who, a, b in turns[entry["id"]] if who != name]
            missed_turns.append(len(own))
            overlapped += sum(overlap_seconds(a, b, others) for a, b in own)
        shown = " ".join(f"{s:.1f}{'*' if i >= found else ''}" for i, s in enumerate(seconds))
        print(f"{entry['id']:10} found {found} of {reference}   talk time s: {shown}")
    print(f"exact: {exact} of {len(files)}; speakers past the count: {len(missed)}, "
          f"talk time {', '.join(f'{s:.1f}' for s in sorted(missed))} s")
    if missed:
        print(f"their talk: {sum(missed):.1f} s, {overlapped:.1f} s of it ({100 * overlapped / sum(missed):.0f} %) while another "
              f"reference speaker talks; reference turns each: {', '.join(map(str, sorted(missed_turns)))}")
    for threshold in (1, 2, 3, 4):
        hits = sum(entry["speakers_found"] == sum(1 for s in talk[entry["id"]].values() if s >= threshold) for entry in files)
        print(f"exact if the reference left out speakers under {threshold} s: {hits} of {len(files)}")


if __name__ == "__main__":
    main()
