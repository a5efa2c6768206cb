"""An offline spoken-digit corpus in AudioMNIST's layout (``spoken_digits``), from espeak-ng.

``build_espeak_corpus`` writes it from ``espeak-ng`` when the real corpus is not at hand
(no network): each speaker is an English accent (``en``, ``en-us``, ...) with a
voice variant (``+m1``, ``+f3``, ``+klatt2``, ...), a base pitch and a speed; each
repetition varies pitch, speed, end punctuation (intonation) and loudness a little. Clips
are trimmed of leading and trailing silence (below 1% of the peak, 10 ms margin kept). The
default 60 speakers x 10 digits x 10 repetitions (6,000 clips, 54 MB) took 135 s wall on 2
cores, one of them busy with a training run (2 synthesis threads; a clip costs ~16 ms of
espeak-ng process, mostly its start-up, and 2 ms of resampling).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConfigError, InputError
from ..io import atomic_path, write_json_atomic
from .spoken_digits import DIGITS, MANIFEST, RATE, resample

WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
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
