"""Spoken-digit corpora for AudioMNISTSequence: the real AudioMNIST, or an offline espeak-ng one.

Layout (AudioMNIST's, github.com/soerenab/AudioMNIST): ``ROOT/<speaker>/<digit>_<speaker>_
<repetition>.wav``, speaker folders ``01`` ... ``60`` (the download has them under ``data/``,
48 kHz mono 16-bit, 50 repetitions per digit and speaker). ``load_audiomnist`` reads any
sample rate and sample format scipy reads (16/32-bit int, 8-bit unsigned, float; stereo is
averaged to mono) and resamples to 8 kHz with ``scipy.signal.resample_poly``.

Clips are loaded eagerly as float32 at 8 kHz: 32 KB per second of audio, about 0.5 GB for
the real corpus (30,000 clips of 0.3-1 s). Reading and resampling a 0.6 s 48 kHz clip takes
about 1 ms (measured), so the real corpus loads in 30-60 s plus its disk read.

``build_espeak_corpus`` writes the same layout from ``espeak-ng`` when the real corpus is
not at hand (no network): each speaker is an English accent (``en``, ``en-us``, ...) with a
voice variant (``+m1``, ``+f3``, ``+klatt2``, ...), a base pitch and a speed; each
repetition varies pitch, speed, end punctuation (intonation) and loudness a little. Clips
are trimmed of leading and trailing silence (below 1% of the peak, 10 ms margin kept). The
default 60 speakers x 10 digits x 10 repetitions (6,000 clips, 54 MB) took 135 s wall on 2
cores, one of them busy with a training run (2 synthesis threads; a clip costs ~16 ms of
espeak-ng process, mostly its start-up, and 2 ms of resampling).

``split_speakers`` makes the train/val/test speakers disjoint (see there).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import warnings
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from math import gcd
from pathlib import Path

import numpy as np

from ..errors import ConfigError, InputError

RATE = 8000
DIGITS = tuple(range(10))
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_NAME = re.compile(r"^([0-9])_([0-9]+)_([0-9]+)\.wav$", re.IGNORECASE)
LAYOUT = "<speaker>/<digit>_<speaker>_<repetition>.wav"


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


# --- the espeak-ng corpus ----------------------------------------------------------------------

MANIFEST = "espeak-corpus.json"
_FORMAT = "sparling-genomics-espeak-corpus-1"
# Accents and voice variants that synthesise without clipping; 7 and 40 are coprime, so
# the first 280 speakers are distinct (accent, variant) pairs even before pitch and speed.
ACCENTS = ("en", "en-us", "en-gb-scotland", "en-gb-x-rp", "en-029", "en-gb-x-gbcwmd",
           "en-gb-x-gbclan")  # fmt: skip
VARIANTS = ("m1", "f1", "m2", "f2", "m3", "f3", "m4", "f4", "m5", "f5", "m6", "klatt", "m7",
            "klatt2", "m8", "klatt3", "klatt4", "Alex", "Andy", "Annie", "Alicia", "aunty",
            "benjamin", "boris", "david", "edward", "linda", "max", "Michael", "quincy", "rob",
            "robert", "steph", "travis", "victor", "zac", "croak", "grandma", "grandpa",
            "belinda")  # fmt: skip
NOT_FOUND = (
    "espeak-ng not found: install it (apt-get install espeak-ng) or give a real AudioMNIST "
    "directory"
)


def espeak_binary() -> str:
    path = shutil.which("espeak-ng")
    if path is None:
        raise ConfigError(NOT_FOUND)
    return path


@dataclass(frozen=True)
class Voice:
    """One espeak-ng speaker: accent+variant, base pitch (0-99) and speed (words/minute)."""

    voice: str
    pitch: int
    speed: int


def speaker_voice(speaker: int, seed: int) -> Voice:
    """The voice of ``speaker`` (1-based), a pure function of (speaker, seed)."""
    rng = np.random.default_rng([seed, 1, speaker])
    accent = ACCENTS[(speaker - 1) % len(ACCENTS)]
    variant = VARIANTS[(speaker - 1) % len(VARIANTS)]
    return Voice(f"{accent}+{variant}", int(rng.integers(20, 81)), int(rng.integers(125, 196)))


def build_espeak_corpus(
    out: Path,
    *,
    speakers: int = 60,
    repetitions: int = 10,
    seed: int = 0,
    workers: int | None = None,
    progress: bool = False,
) -> Path:
    """Write an AudioMNIST-layout corpus (8 kHz 16-bit WAVs) into ``out`` from espeak-ng.

    Every WAV is written atomically and depends only on (seed, speaker, digit, repetition),
    so a killed build is completed by running it again with the same parameters. ``out``
    must be new, empty, or such an unfinished (or finished: nothing to do) build.
    """
    if not 1 <= speakers <= 999 or not 1 <= repetitions <= 999:
        raise ConfigError("--speakers and --repetitions must lie in 1..999")
    binary = espeak_binary()
    out = Path(out)
    params = {"format": _FORMAT, "speakers": speakers, "repetitions": repetitions, "seed": seed}
    manifest = _check_out(out, params)
    if manifest.get("complete"):
        return out
    from ..io import write_json_atomic

    voices = {s: speaker_voice(s, seed) for s in range(1, speakers + 1)}
    described = {s: vars(v) for s, v in voices.items()}
    write_json_atomic(out / MANIFEST, {**params, "complete": False, "espeak_ng": _version(binary),
                                       "voices": described})  # fmt: skip
    jobs = [(s, d, r) for s in voices for d in DIGITS for r in range(repetitions)
            if not _wav_path(out, s, d, r).exists()]  # fmt: skip
    workers = workers or min(8, os.cpu_count() or 1)
    from tqdm import tqdm

    pool = ThreadPoolExecutor(workers)
    try:
        # disable=None: a bar only on a terminal
        with tqdm(total=len(jobs), desc="espeak-ng clips", disable=not progress or None) as bar:
            for _ in pool.map(lambda j: _write_clip(out, binary, voices[j[0]], seed, *j), jobs):
                bar.update()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # a failure or ^C stops the queued clips
    write_json_atomic(out / MANIFEST, {**json.loads((out / MANIFEST).read_text()),
                                       "complete": True})  # fmt: skip
    return out


def _check_out(out: Path, params: dict) -> dict:
    """The manifest of an earlier build of ``params`` in ``out`` ({} for a new or empty one)."""
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder; give a new or empty folder")
    if not out.exists() or not any(out.iterdir()):
        return {}
    path = out / MANIFEST
    if not path.is_file():
        raise InputError(f"{out}: not empty and not an espeak-ng corpus build; give a new or "
                         "empty folder")  # fmt: skip
    try:
        manifest = json.loads(path.read_text())
    except (ValueError, OSError) as exc:
        raise InputError(f"{path}: unreadable ({exc}); remove the folder and build again") from None
    old = {k: manifest.get(k) for k in params}
    if old != params:
        raise InputError(
            f"{out}: holds a build with speakers={old['speakers']}, "
            f"repetitions={old['repetitions']}, seed={old['seed']}; rerun with those to "
            "complete it, or give another folder"
        )
    return manifest


def _version(binary: str) -> str:
    result = subprocess.run([binary, "--version"], capture_output=True, text=True, check=False)
    return result.stdout.strip().split("  ")[0]


def _wav_path(out: Path, speaker: int, digit: int, rep: int) -> Path:
    return out / f"{speaker:02d}" / f"{digit}_{speaker:02d}_{rep}.wav"


def _write_clip(out: Path, binary: str, voice: Voice, seed: int, speaker: int, digit: int,
                rep: int) -> None:  # fmt: skip
    from scipy.io import wavfile

    from ..io import atomic_path

    wave = synthesize(binary, voice, seed, speaker, digit, rep)
    pcm = np.round(np.clip(wave, -1, 1) * 32767).astype(np.int16)
    with atomic_path(_wav_path(out, speaker, digit, rep)) as tmp:
        wavfile.write(tmp, RATE, pcm)


def synthesize(binary: str, voice: Voice, seed: int, speaker: int, digit: int,
               rep: int) -> np.ndarray:  # fmt: skip
    """One repetition of ``digit`` by ``voice``: 8 kHz float32, silence trimmed, peak 0.3-0.9."""
    rng = np.random.default_rng([seed, 2, speaker, digit, rep])
    pitch = int(np.clip(voice.pitch + rng.integers(-6, 7), 0, 99))
    speed = int(voice.speed * rng.uniform(0.9, 1.1))
    text = WORDS[digit] + str(rng.choice([".", "!", "?", ","]))
    args = [binary, "--stdout", "-v", voice.voice, "-p", str(pitch), "-s", str(speed), "-a", "70",
            text]  # fmt: skip
    result = subprocess.run(args, capture_output=True, check=False)
    if result.returncode != 0:
        message = result.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(f"espeak-ng -v {voice.voice} failed: {message[-1] if message else '?'}")
    wave, source_rate = _parse_stdout_wav(result.stdout)
    wave = trim_silence(resample(wave, source_rate))
    return wave * np.float32(rng.uniform(0.3, 0.9) / max(float(np.abs(wave).max()), 1e-6))


def _parse_stdout_wav(data: bytes) -> tuple[np.ndarray, int]:
    """16-bit PCM from espeak-ng's ``--stdout`` WAV (whose size fields are placeholders)."""
    fmt, body = data.find(b"fmt "), data.find(b"data")
    if data[:4] != b"RIFF" or fmt < 0 or body < 0:
        raise InputError("espeak-ng wrote no WAV data (is it a working espeak-ng?)")
    channels = int.from_bytes(data[fmt + 10 : fmt + 12], "little")
    rate = int.from_bytes(data[fmt + 12 : fmt + 16], "little")
    bits = int.from_bytes(data[fmt + 22 : fmt + 24], "little")
    if bits != 16:
        raise InputError(f"espeak-ng wrote {bits}-bit audio; expected 16-bit")
    pcm = data[body + 8 :]
    pcm = np.frombuffer(pcm[: len(pcm) // (2 * channels) * 2 * channels], "<i2")
    wave = pcm.reshape(-1, channels).mean(axis=1) / 32768.0
    if wave.size == 0:
        raise InputError("espeak-ng wrote no audio")
    return wave.astype(np.float32), rate


def trim_silence(wave: np.ndarray, rate: int = RATE, level: float = 0.01,
                 margin: float = 0.01) -> np.ndarray:  # fmt: skip
    """``wave`` without leading/trailing samples below ``level`` x its peak (``margin`` s kept)."""
    loud = np.flatnonzero(np.abs(wave) >= level * np.abs(wave).max())
    if loud.size == 0:
        return wave
    keep = int(margin * rate)
    return wave[max(0, loud[0] - keep) : loud[-1] + 1 + keep]
