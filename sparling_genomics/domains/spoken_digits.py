"""Spoken-digit corpora for AudioMNISTSequence: the real AudioMNIST, or an offline espeak-ng one.

Layout (AudioMNIST's, github.com/soerenab/AudioMNIST): ``ROOT/<speaker>/<digit>_<speaker>_
<repetition>.wav``, speaker folders ``01`` ... ``60`` (the download has them under ``data/``,
48 kHz mono 16-bit, 50 repetitions per digit and speaker). ``load_audiomnist`` reads any
sample rate and sample format scipy reads (16/32-bit int, 8-bit unsigned, float; stereo is
averaged to mono) and resamples to 8 kHz with ``scipy.signal.resample_poly``.

Clips are loaded eagerly as float32 at 8 kHz: 32 KB per second of audio, about 0.5 GB for
the real corpus (30,000 clips of 0.3-1 s). Reading and resampling a 0.6 s 48 kHz clip takes
about 1 ms (measured), so the real corpus loads in 30-60 s plus its disk read.

``espeak_corpus.build_espeak_corpus`` writes the same layout offline from espeak-ng when the
real corpus is not at hand. ``split_speakers`` makes the train/val/test speakers disjoint
(see there).
"""

from __future__ import annotations

import json
import os
import re
import struct
import warnings
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from math import gcd
from pathlib import Path

import numpy as np

from ..errors import InputError

RATE = 8000
DIGITS = tuple(range(10))
_NAME = re.compile(r"^([0-9])_([0-9]+)_([0-9]+)\.wav$", re.IGNORECASE)
LAYOUT = "<speaker>/<digit>_<speaker>_<repetition>.wav"
MANIFEST = "espeak-corpus.json"  # an espeak-ng build's record (``espeak_corpus``)


@dataclass
class AudioCorpus:
    """Spoken-digit clips by (speaker, digit), float32 mono at ``rate`` Hz, in repetition order."""

    root: Path
    clips: dict[tuple[int, int], list[np.ndarray]]
    speakers: list[int]
    rate: int = RATE
    source_rates: Counter = field(default_factory=Counter)  # sample rate -> clips read at it

    def clips_of(self, speaker: int, digit: int) -> list[np.ndarray]:
        return self.clips.get((speaker, digit), [])

    def count_per_digit(self) -> dict[int, int]:
        return {d: sum(len(self.clips_of(s, d)) for s in self.speakers) for d in DIGITS}

    def __len__(self) -> int:
        return sum(len(c) for c in self.clips.values())


# --- reading ---------------------------------------------------------------------------------


def load_audiomnist(root: Path) -> AudioCorpus:
    """Every clip under an AudioMNIST-layout directory (``root`` or ``root/data``), at 8 kHz."""
    root = Path(root)
    if not root.is_dir():
        raise InputError(f"{root}: not a directory; give the AudioMNIST folder (or its data/)")
    base = root / "data" if (root / "data").is_dir() else root
    _refuse_unfinished_build(base)
    wavs = sorted(
        p
        for p in base.rglob("*")
        if p.suffix.lower() == ".wav"
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(base).parts)
    )
    if not wavs:
        raise InputError(
            f"{root}: no .wav files; give an AudioMNIST folder ({LAYOUT}, e.g. a clone of "
            "github.com/soerenab/AudioMNIST) or build one with `sparling-genomics audio-corpus`"
        )
    entries = [_parse_name(base, path) for path in wavs]
    clips: dict[tuple[int, int], list[tuple[int, np.ndarray]]] = {}
    rates: Counter = Counter()
    with ThreadPoolExecutor(min(4, os.cpu_count() or 1)) as pool:
        waves = list(pool.map(read_wav, wavs))
    for (speaker, digit, rep), (wave, rate) in zip(entries, waves):
        rates[rate] += 1
        clips.setdefault((speaker, digit), []).append((rep, wave))
    missing = [d for d in DIGITS if not any(key[1] == d for key in clips)]
    if missing:
        found = sorted({d for _, d in clips})
        raise InputError(
            f"{base}: no clip of digit {', '.join(map(str, missing))} for any speaker (digits "
            f"found: {', '.join(map(str, found))}); the corpus needs all ten digits"
        )
    ordered = {key: [w for _, w in sorted(v, key=lambda t: t[0])] for key, v in clips.items()}
    speakers = sorted({s for s, _ in clips})
    return AudioCorpus(base, ordered, speakers, RATE, rates)


def _refuse_unfinished_build(base: Path) -> None:
    try:
        manifest = json.loads((base / MANIFEST).read_text())
    except (OSError, ValueError):
        return  # no espeak-ng build (or not ours): the WAVs are checked as they are
    if isinstance(manifest, dict) and manifest.get("complete") is False:
        raise InputError(
            f"{base}: an unfinished espeak-ng build; complete it with `sparling-genomics "
            f"audio-corpus --out {base} --speakers {manifest.get('speakers')} --repetitions "
            f"{manifest.get('repetitions')} --seed {manifest.get('seed')}`"
        )


def _parse_name(base: Path, path: Path) -> tuple[int, int, int]:
    rel = path.relative_to(base)
    if len(rel.parts) != 2 or not re.fullmatch(r"[0-9]+", rel.parts[0]):
        raise InputError(
            f"{path}: not in a speaker folder; expected {base}/{LAYOUT} (AudioMNIST's layout)"
        )
    match = _NAME.match(path.name)
    if not match:
        raise InputError(
            f"{path}: name is not <digit>_<speaker>_<repetition>.wav (e.g. 7_{rel.parts[0]}_0.wav)"
        )
    digit, speaker, rep = (int(g) for g in match.groups())
    if speaker != int(rel.parts[0]):
        raise InputError(
            f"{path}: speaker {match.group(2)} in the name but folder {rel.parts[0]}; "
            "move the file to its speaker's folder or rename it"
        )
    return speaker, digit, rep


def read_wav(path: Path, rate: int = RATE) -> tuple[np.ndarray, int]:
    """A WAV file as mono float32 in [-1, 1] resampled to ``rate``, and its own sample rate."""
    from scipy.io import wavfile

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unknown chunks (LIST, ...) are fine
            source_rate, data = wavfile.read(path)
    except (ValueError, OSError, EOFError, IndexError, TypeError, struct.error) as exc:
        raise InputError(
            f"{path}: not a readable WAV file ({exc}); re-download or remove it"
        ) from None
    wave = _to_float(np.asarray(data))
    if wave.ndim == 2:
        wave = wave.mean(axis=1)
    if wave.size == 0 or not np.isfinite(wave).all():
        raise InputError(f"{path}: the WAV holds no (finite) audio; re-download or remove it")
    return resample(wave, source_rate, rate), int(source_rate)


def _to_float(data: np.ndarray) -> np.ndarray:
    if data.dtype == np.uint8:
        return (data.astype(np.float32) - 128.0) / 128.0
    if np.issubdtype(data.dtype, np.integer):
        return data.astype(np.float32) / float(2 ** (8 * data.dtype.itemsize - 1))
    return data.astype(np.float32)


def resample(wave: np.ndarray, source: int, target: int = RATE) -> np.ndarray:
    """``wave`` from ``source`` Hz to ``target`` Hz (polyphase, scipy's Kaiser window)."""
    from scipy.signal import resample_poly

    if source <= 0:
        raise InputError(f"a WAV sample rate of {source} Hz is impossible")
    if source == target:
        return wave.astype(np.float32, copy=False)
    g = gcd(int(source), int(target))
    return resample_poly(wave, target // g, source // g).astype(np.float32)


# --- splits ----------------------------------------------------------------------------------


def split_speakers(speakers: Iterable[int]) -> dict[str, list[int]]:
    """Speaker-disjoint train/val/test splits, as the paper's code made them.

    The paper's code shuffles speakers 1-60 with ``np.random.RandomState(0)`` and trains on
    the first 51 of that order, tests on the last 9 ("speakers 1-51 / 52-60" are positions in
    the shuffled order, not folder numbers). We do the same to the sorted speakers, so for
    AudioMNIST's 60 the test speakers are the paper's, and take validation (which drives
    annealing) from the end of the paper's train part: 45 train, 6 val, 9 test. A corpus
    with another number of speakers is split in the same proportions (15% test, 10% val,
    at least one each).
    """
    order = sorted(set(int(s) for s in speakers))
    if len(order) < 3:
        raise InputError(
            f"{len(order)} speaker(s): speaker-disjoint train/val/test splits need at least 3"
        )
    np.random.RandomState(0).shuffle(order)
    n = len(order)
    n_test = max(1, round(n * 9 / 60))
    n_val = max(1, round(n * 6 / 60))
    n_train = n - n_test - n_val
    return {
        "train": sorted(order[:n_train]),
        "val": sorted(order[n_train : n_train + n_val]),
        "test": sorted(order[n_train + n_val :]),
    }


def audio_summary(corpus: AudioCorpus) -> list[str]:
    """Lines describing ``corpus``: speakers, clips per digit, durations, rates, the split."""
    lengths = np.array([len(c) for clips in corpus.clips.values() for c in clips]) / corpus.rate
    rates = ", ".join(f"{r} Hz ({n} clips)" for r, n in sorted(corpus.source_rates.items()))
    per_digit = corpus.count_per_digit()
    lines = [
        f"speakers: {len(corpus.speakers)} ({', '.join(map(str, corpus.speakers))})",
        "clips per digit: " + ", ".join(f"{d}: {n}" for d, n in per_digit.items()),
        f"clip seconds: min {lengths.min():.2f}, mean {lengths.mean():.2f}, "
        f"max {lengths.max():.2f}",
        f"source sample rates: {rates}",
    ]
    if len(corpus.speakers) >= 3:
        split = split_speakers(corpus.speakers)
        lines += [f"{name} speakers: {', '.join(map(str, s))}" for name, s in split.items()]
    else:
        lines.append("split: train/val/test need at least 3 speakers")
    lines.append(f"{corpus.root}: {len(corpus)} clips of {len(corpus.speakers)} speakers, "
                 f"read at {corpus.rate} Hz")  # fmt: skip
    return lines
