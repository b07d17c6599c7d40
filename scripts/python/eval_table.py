#!/usr/bin/env python3
"""Markdown table rows from `speakersync eval --json` reports, so published accuracy figures come from a
command and not from typing (docs/pyannote.md, docs/accuracy.md).

  eval_table.py LABEL=REPORT.json [LABEL=REPORT.json ...] [--files ID,ID,...] [--set NAME]

One row per report: DER collar 0 and 0.25 (overlap scored), live DER (collar 0.25), JER, WDER (words whose
final speaker is not their reference speaker, over the words given a speaker), words without a speaker,
files whose speaker count is exact. CPU is not here: `speakersync-bench overlap` / `diarize` measure it on
one thread. With --files only those recordings count: DER components and word counts are summed over them, so a
subset (e.g. the ami-dev files never used for calibration) is scored exactly as the whole set is.
"""
import argparse
import json
import sys


def row(label, report, files, set_name):
    chosen = [f for f in report["files"] if files is None or f["id"] in files]
    if files is not None and len(chosen) != len(files):
        sys.exit(f"{label}: the report lacks {sorted(set(files) - {f['id'] for f in chosen})}")

    def der(key):
        parts = ("missed_seconds", "false_alarm_seconds", "confusion_seconds")
        error = sum(f[key][p] for f in chosen for p in parts)
        reference = sum(f[key]["reference_seconds"] for f in chosen)
        return 100 * error / reference if reference else float("nan")

    aligned = sum(f["aligned_words"] for f in chosen)
    wrong = sum(f["wder"] * f["aligned_words"] for f in chosen)
    words = sum(f["words"] for f in chosen)
    unlabelled = sum(f["unlabelled_words"] for f in chosen)
    # JER as eval reports it for the whole set; for a subset, the mean over its files (marked *).
    jer = report["overall"]["jer"] if files is None else sum(f["jer"] for f in chosen) / len(chosen)
    jer_mark = "" if files is None else "*"
    exact = sum(1 for f in chosen if f["speakers_found"] == f["speakers_reference"])
    return (f"| {set_name} | {label} | {der('der_collar_0'):.1f} % | {der('der_collar_0_25'):.1f} % | "
            f"{der('live_der_collar_0_25'):.1f} % | {100 * jer:.1f} %{jer_mark} | {100 * wrong / aligned if aligned else float('nan'):.1f} % | "
            f"{unlabelled}/{words} | {exact}/{len(chosen)} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", help="LABEL=REPORT.json")
    parser.add_argument("--files", help="only these recording ids (comma-separated)")
    parser.add_argument("--set", default="", help="the set's name for the first column")
    args = parser.parse_args()
    files = set(args.files.split(",")) if args.files else None
    for item in args.reports:
        label, _, path = item.partition("=")
        with open(path) as handle:
            print(row(label, json.load(handle), files, args.set))


if __name__ == "__main__":
    main()
