#!/usr/bin/env python3
"""Scores diarization cases with pyannote.metrics, the reference implementation that
Tests/DiarizationScoringTests/PyannoteAgreementTests.swift compares DiarizationScoring against.

stdin:  {"cases": [{"uri": str, "reference": RTTM text, "hypothesis": RTTM text,
                    "uem": UEM text or null, "collar": float, "skip_overlap": bool}, ...]}
stdout: {"pyannote_metrics": version, "results": [{"total", "correct", "missed", "false_alarm",
         "confusion", "der", "jer", "speaker_count_error"}, ...]} in case order.

Files are read with pyannote.database's RTTM/UEM loaders, as pyannote users read them.
"""
import io
import json
import sys
import warnings
from importlib.metadata import version

from pyannote.core import Annotation, Timeline
from pyannote.database.util import load_rttm, load_uem
from pyannote.metrics.diarization import (
    DiarizationErrorRate,
    DiarizationSpeakerCountError,
    JaccardErrorRate,
)


def annotation(rttm_text, uri):
    if not rttm_text.strip():
        return Annotation(uri=uri)
    return load_rttm(io.StringIO(rttm_text)).get(uri, Annotation(uri=uri))


def evaluation_map(uem_text, uri):
    if uem_text is None:
        return None
    if not uem_text.strip():
        return Timeline(uri=uri)
    return load_uem(io.StringIO(uem_text)).get(uri, Timeline(uri=uri))


def score(case):
    uri = case["uri"]
    reference = annotation(case["reference"], uri)
    hypothesis = annotation(case["hypothesis"], uri)
    uem = evaluation_map(case.get("uem"), uri)
    collar = float(case["collar"])
    skip_overlap = bool(case["skip_overlap"])
    der = DiarizationErrorRate(collar=collar, skip_overlap=skip_overlap)
    components = der(reference, hypothesis, uem=uem, detailed=True)
    jer = JaccardErrorRate(collar=collar, skip_overlap=skip_overlap)
    count = DiarizationSpeakerCountError()
    return {
        "total": components["total"],
        "correct": components["correct"],
        "missed": components["missed detection"],
        "false_alarm": components["false alarm"],
        "confusion": components["confusion"],
        "der": components["diarization error rate"],
        "jer": jer(reference, hypothesis, uem=uem),
        "speaker_count_error": count(reference, hypothesis, uem=uem),
    }


def main():
    warnings.simplefilter("ignore")
    cases = json.load(sys.stdin)["cases"]
    results = [score(case) for case in cases]
    json.dump({"pyannote_metrics": version("pyannote.metrics"), "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
