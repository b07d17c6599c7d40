#!/usr/bin/env python3
"""Cut a recording along its reference RTTM into one WAV per speaker, for known-speaker trials.

Each output file holds only that speaker's speech where nobody else speaks (pieces of at least
--min-seconds), joined with --gap-seconds of silence, and reference.rttm gives its turns under the
speaker's name as recording id, so `speakersync-bench diarize --known-speakers` enrols each person from
their own file and finds them absent from the others' (docs/accuracy.md, "Decided by the diarizer").

    python3 scripts/python/split_by_speaker.py $D/sample/sample.wav $D/sample/sample.rttm sample-split

Standard library only: 16-bit mono PCM WAV in and out.
"""
import argparse
import os
import wave


def turns_of(rttm_path, recording):
    turns = []
    with open(rttm_path) as handle:
        for line in handle:
            fields = line.split()
            if len(fields) >= 8 and fields[0] == "SPEAKER" and fields[1] == recording:
                start = float(fields[3])
                turns.append((start, start + float(fields[4]), fields[7]))
    return turns


def alone_pieces(turns, speaker):
    """The parts of `speaker`'s turns that no other speaker's turn overlaps, in time order."""
    pieces = []
    for start, end, who in sorted(turns):
        if who != speaker:
            continue
        spans = [(start, end)]
        for other_start, other_end, other in turns:
            if other == speaker:
                continue
            cut = []
            for a, b in spans:
                if other_end <= a or other_start >= b:
                    cut.append((a, b))
                    continue
                if other_start > a:
                    cut.append((a, other_start))
                if other_end < b:
                    cut.append((other_end, b))
            spans = cut
        pieces += spans
    return pieces


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wav")
    parser.add_argument("rttm")
    parser.add_argument("output_dir")
    parser.add_argument("--recording", help="RTTM recording id (default: the WAV's file name without extension)")
    parser.add_argument("--min-seconds", type=float, default=0.3)
    parser.add_argument("--gap-seconds", type=float, default=0.4)
    args = parser.parse_args()
    recording = args.recording or os.path.splitext(os.path.basename(args.wav))[0]
    turns = turns_of(args.rttm, recording)
    if not turns:
        raise SystemExit(f"no SPEAKER lines for recording '{recording}' in {args.rttm}")
    with wave.open(args.wav, "rb") as source:
        if source.getnchannels() != 1 or source.getsampwidth() != 2:
            raise SystemExit(f"{args.wav}: need 16-bit mono PCM")
        rate = source.getframerate()
        audio = source.readframes(source.getnframes())
    os.makedirs(args.output_dir, exist_ok=True)
    gap = b"\0\0" * int(args.gap_seconds * rate)
    with open(os.path.join(args.output_dir, "reference.rttm"), "w") as rttm:
        for speaker in sorted({who for _, _, who in turns}):
            parts, at = [], 0.0
            for start, end in alone_pieces(turns, speaker):
                if end - start < args.min_seconds:
                    continue
                piece = audio[2 * int(start * rate): 2 * int(end * rate)]
                seconds = len(piece) / 2 / rate
                rttm.write(f"SPEAKER {speaker} 1 {at:.3f} {seconds:.3f} <NA> <NA> {speaker} <NA> <NA>\n")
                parts += [piece, gap]
                at += seconds + len(gap) / 2 / rate
            with wave.open(os.path.join(args.output_dir, f"{speaker}.wav"), "wb") as out:
                out.setnchannels(1)
                out.setsampwidth(2)
                out.setframerate(rate)
                out.writeframes(b"".join(parts))
            print(f"{speaker}: {at:.1f} s")


if __name__ == "__main__":
    main()
