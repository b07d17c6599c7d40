#!/usr/bin/env python3
"""Scores the words of `speakersync stream --asr server --format json` (the server's own recognition).

  server_words_score.py synth DIR ID...         WER and WDER against DIR/words/ID.json (speakersync synth's
                                                truth), reading DIR/server-ID.json
  server_words_score.py rttm TRANSCRIPT.json RTTM  no word truth: word count, midpoints inside the reference
                                                speech, single-speaker words labelled with the reference
                                                speaker (best one-to-one label mapping)

Words are normalised as DiarizationScoring's WDER aligns them (lower case; , . ? ! " ' - _ removed) and
aligned by Levenshtein; WER = (substitutions + deletions + insertions) / reference words. Standard library only.
"""
import itertools
import json
import sys


def normalised(text):
    lowered = text.lower()
    stripped = ''.join(c for c in lowered if c not in ',.?!"\'-_')
    return stripped or lowered


def align(reference, hypothesis):
    n, m = len(reference), len(hypothesis)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        d[i][0] = i
    for j in range(m + 1):
        d[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j - 1] + (reference[i - 1] != hypothesis[j - 1]), d[i - 1][j] + 1, d[i][j - 1] + 1)
    pairs, i, j = [], n, m
    while i > 0 or j > 0:
        if i > 0 and j > 0 and d[i][j] == d[i - 1][j - 1] + (reference[i - 1] != hypothesis[j - 1]):
            pairs.append((i - 1, j - 1)); i -= 1; j -= 1
        elif i > 0 and d[i][j] == d[i - 1][j] + 1:
            pairs.append((i - 1, None)); i -= 1
        else:
            pairs.append((None, j - 1)); j -= 1
    return d[n][m], pairs[::-1]


def best_agreement(pairs):
    """(reference speaker, hypothesis label) pairs: most that agree under a one-to-one mapping."""
    labels = sorted({h for _, h in pairs if h})
    speakers = sorted({r for r, _ in pairs})
    best = 0
    for choice in itertools.permutations(speakers + [None] * len(labels), len(labels)):
        mapping = dict(zip(labels, choice))
        best = max(best, sum(1 for r, h in pairs if h and mapping[h] == r))
    return best


def server_words(path):
    words = [w for u in json.load(open(path))['utterances'] for w in u['words']]
    return sorted(words, key=lambda w: w['start'])


def synth(folder, ids):
    totals = dict(reference=0, errors=0, aligned=0, mislabelled=0, hypothesis=0, unlabelled=0)
    for ident in ids:
        truth = sorted(json.load(open(f'{folder}/words/{ident}.json'))['words'], key=lambda w: w['start'])
        hypothesis = server_words(f'{folder}/server-{ident}.json')
        errors, pairs = align([normalised(w['text']) for w in truth], [normalised(w['text']) for w in hypothesis])
        aligned = [(truth[r]['speaker'], hypothesis[h].get('speaker')) for r, h in pairs if r is not None and h is not None]
        mislabelled = len(aligned) - best_agreement(aligned)
        unlabelled = sum(1 for w in hypothesis if not w.get('speaker'))
        print(f'{ident}: {len(truth)} reference words, {len(hypothesis)} server words, WER {errors / len(truth):.3f}, '
              f'WDER {mislabelled / max(1, len(aligned)):.3f}, unlabelled {unlabelled}')
        for key, value in (('reference', len(truth)), ('errors', errors), ('aligned', len(aligned)),
                           ('mislabelled', mislabelled), ('hypothesis', len(hypothesis)), ('unlabelled', unlabelled)):
            totals[key] += value
    print(f"all: {totals['reference']} reference words, {totals['hypothesis']} server words, "
          f"WER {totals['errors'] / totals['reference']:.3f}, WDER {totals['mislabelled'] / max(1, totals['aligned']):.3f}, "
          f"unlabelled {totals['unlabelled']}")


def rttm(transcript, path):
    turns = []
    for line in open(path):
        fields = line.split()
        if fields and fields[0] == 'SPEAKER':
            turns.append((fields[7], float(fields[3]), float(fields[3]) + float(fields[4])))
    words = server_words(transcript)
    inside, pairs = 0, []
    for word in words:
        middle = (word['start'] + word['end']) / 2
        active = {speaker for speaker, start, end in turns if start <= middle <= end}
        inside += bool(active)
        if len(active) == 1:
            pairs.append((active.pop(), word.get('speaker')))
    agreeing = best_agreement(pairs)
    print(f'{len(words)} words, {sum(1 for w in words if w.get("speaker"))} labelled, {inside} midpoints inside reference '
          f'speech, {agreeing}/{len(pairs)} single-speaker words with the reference speaker ({100 * agreeing / max(1, len(pairs)):.1f} %)')


if __name__ == '__main__':
    if len(sys.argv) >= 4 and sys.argv[1] == 'synth':
        synth(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == 'rttm':
        rttm(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
