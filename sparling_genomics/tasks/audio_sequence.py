"""AudioMNISTSequence data (the Sparling paper's third domain): spoken digits in 15 s of noise.

A sample holds 5-10 digits drawn with replacement, each a random clip of a random speaker of
the split (``audio_corpus.split_speakers``), at 8 kHz, placed without overlap at uniformly
random positions in a 15 s buffer (uniform over all non-overlapping placements, as the
paper's rejection sampling), plus noise, clipped to [-1, 1] (the paper's code did not clip;
clips never overlap and the noise stays under 0.001, so this only guards louder inputs).
The output string is the digits in time order. Truth: each clip's span of spectrogram
frames, the frames whose window overlaps the clip's samples (the paper's code scaled sample
positions by frames / samples instead: about one frame less on each side).

Noise: the paper's "N(0, 2^-10)" is, in its code, ``scipy.stats.truncnorm(-1, 1,
scale=2**-10)``: a normal of scale 2^-10 (about -60 dBFS) truncated to +/-2^-10 (standard
deviation 0.54 x 2^-10). We draw the same (through a table of 2^16 quantiles: fast, and
exact to far below the 16-bit step of the clips); ``noise`` is that scale (0 for none).

Spectrogram: what the paper's code computed with (a copy of) torchaudio's defaults --
``MelSpectrogram(8000, n_fft=375, hop_length=187, n_mels=64)``: periodic Hann window,
``center=True`` with reflect padding, power 2, HTK mel scale, triangular filters without
area normalisation, f_min 0, f_max 4 kHz -- then ``AmplitudeToDB(top_db=80)``: 10 log10 of
the power (floored at 1e-10) clamped at 80 dB below the sample's maximum. 15 s at 8 kHz
gives 1 + 120000 // 187 = 642 frames; the result is (frames, n_mels), time first. It is
written here in numpy because torchaudio pins its own torch release (we pin torch) and
librosa pulls numba; ``tests/tasks/test_audio_sequence.py`` checks the STFT against
``torch.stft`` and the filters against the HTK formula.

Speed: 180-310 samples/s on one core (3.3-5.7 ms a sample, measured with the other core
busy; the STFT of 642 frames is about half of it; ``scipy.fft`` because numpy's FFT of
length 375 is 8x slower). ``generate_batch`` is a pure function of (seed, index) for a
given corpus and speaker set.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.fft
import torch

from ..config import RunConfig, bounded
from ..errors import ConfigError, InputError
from ..models.heads import CTCSequenceHead1D, ctc_greedy_decode, ctc_loss
from ..models.motif import MotifModel1D
from ..models.sparling import SparlingModel
from ..sparsity.layer import SparseSettings, SpatialSparsity
from .audio_corpus import DIGITS, AudioCorpus
from .base import Batch, Cell, Task


@dataclass(frozen=True)
class AudioSequenceSpec:
    seconds: float = 15.0
    rate: int = 8000
    min_clips: int = 5
    max_clips: int = 10
    noise: float = 2.0**-10  # scale of the truncated-normal noise (see the module docstring)
    n_mels: int = 64
    n_fft: int = 375
    hop: int = 187
    top_db: float = 80.0

    @property
    def samples(self) -> int:
        return int(round(self.seconds * self.rate))

    @property
    def frames(self) -> int:
        """Spectrogram frames (``center=True``: one per hop, plus one)."""
        return 1 + self.samples // self.hop

    def check(self) -> None:
        if not 1 <= self.min_clips <= self.max_clips:
            raise ConfigError("clips per sample must satisfy 1 <= min_clips <= max_clips")
        if self.rate <= 0 or self.seconds <= 0 or self.noise < 0 or self.top_db <= 0:
            raise ConfigError("rate, seconds and top_db must be positive and noise >= 0")
        if not 0 < self.hop <= self.n_fft or self.n_mels < 1:
            raise ConfigError("need 0 < hop <= n_fft and n_mels >= 1")
        if self.samples <= self.n_fft // 2:
            raise ConfigError(f"{self.seconds} s is shorter than half an FFT window")


@dataclass
class AudioSequenceSample:
    spectrogram: np.ndarray  # (frames, n_mels) float32, dB
    digits: list[int]  # the output string: digits in time order
    spans: list[tuple[int, int, int]]  # (digit, frame0, frame1), half-open, in time order
    placements: list[tuple[int, int, int, int]]  # (digit, speaker, sample0, sample1)


# --- the spectrogram ---------------------------------------------------------------------------


def hz_to_mel(hz):
    """HTK mel scale."""
    return 2595.0 * np.log10(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)


def mel_to_hz(mel):
    return 700.0 * (10.0 ** (np.asarray(mel, dtype=np.float64) / 2595.0) - 1.0)


@lru_cache(maxsize=8)
def mel_filterbank(rate: int, n_fft: int, n_mels: int) -> np.ndarray:
    """(n_fft // 2 + 1, n_mels) triangular HTK filters from 0 Hz to rate / 2, unnormalised
    (torchaudio's ``melscale_fbanks(..., norm=None, mel_scale="htk")``)."""
    freqs = np.linspace(0, rate // 2, n_fft // 2 + 1)
    edges = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(rate // 2), n_mels + 2))
    width = np.diff(edges)
    slopes = edges[None, :] - freqs[:, None]
    down = -slopes[:, :-2] / width[:-1]
    up = slopes[:, 2:] / width[1:]
    fb = np.maximum(0.0, np.minimum(down, up)).astype(np.float32)
    fb.setflags(write=False)
    return fb


@lru_cache(maxsize=8)
def _hann(n: int) -> np.ndarray:
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(np.float32)  # periodic
    window.setflags(write=False)
    return window


def power_spectrogram(wave: np.ndarray, n_fft: int, hop: int) -> np.ndarray:
    """(frames, n_fft // 2 + 1) |STFT|^2, as ``torch.stft(center=True, pad_mode="reflect")``
    with a periodic Hann window."""
    x = np.asarray(wave, dtype=np.float32)
    pad = n_fft // 2
    padded = np.pad(x, pad, mode="reflect")
    frames = 1 + (padded.size - n_fft) // hop
    windows = np.lib.stride_tricks.sliding_window_view(padded, n_fft)[::hop][:frames]
    spectrum = scipy.fft.rfft(windows * _hann(n_fft), axis=-1)  # 8x numpy's for n_fft = 375
    return (spectrum.real**2 + spectrum.imag**2).astype(np.float32)


def mel_spectrogram(wave: np.ndarray, spec: AudioSequenceSpec | None = None) -> np.ndarray:
    """(frames, n_mels) float32 log-mel spectrogram in dB, ``top_db`` below its maximum."""
    spec = spec or AudioSequenceSpec()
    power = power_spectrogram(wave, spec.n_fft, spec.hop)
    mel = power @ mel_filterbank(spec.rate, spec.n_fft, spec.n_mels)
    db = 10.0 * np.log10(np.maximum(mel, 1e-10))
    return np.maximum(db, db.max() - spec.top_db).astype(np.float32)


def frame_span(start: int, end: int, spec: AudioSequenceSpec) -> tuple[int, int]:
    """Half-open range of frames whose window overlaps samples [start, end).

    Frame t's window covers samples [t * hop - n_fft // 2, t * hop - n_fft // 2 + n_fft).
    """
    left = spec.n_fft // 2
    right = spec.n_fft - left
    frame0 = max(0, (start - right) // spec.hop + 1)
    frame1 = min(spec.frames, -(-(end + left) // spec.hop))
    return frame0, frame1


# --- samples ------------------------------------------------------------------------------------


def _speakers_by_digit(corpus: AudioCorpus, speakers: Sequence[int]) -> list[list[int]]:
    chosen = sorted(set(int(s) for s in speakers))
    known = set(corpus.speakers)
    unknown = [s for s in chosen if s not in known]
    if not chosen or unknown:
        raise InputError(
            f"{corpus.root}: speaker(s) {unknown or '(none)'} not in the corpus "
            f"(it has {len(corpus.speakers)}: {corpus.speakers[0]}-{corpus.speakers[-1]})"
        )
    by_digit = [[s for s in chosen if corpus.clips_of(s, d)] for d in DIGITS]
    missing = [d for d in DIGITS if not by_digit[d]]
    if missing:
        raise InputError(
            f"{corpus.root}: no clip of digit {', '.join(map(str, missing))} among speakers "
            f"{chosen}; every split needs all ten digits"
        )
    return by_digit


def generate_sample(
    rng: np.random.Generator,
    corpus: AudioCorpus,
    speakers: Sequence[int],
    spec: AudioSequenceSpec | None = None,
    *,
    tries: int = 100,
) -> AudioSequenceSample:
    """One AudioMNISTSequence sample: its log-mel spectrogram, digits and frame spans."""
    spec = _checked_spec(corpus, spec)
    return _generate_sample(rng, corpus, _speakers_by_digit(corpus, speakers), spec, tries)


def _checked_spec(corpus: AudioCorpus, spec: AudioSequenceSpec | None) -> AudioSequenceSpec:
    spec = spec or AudioSequenceSpec()
    spec.check()
    if corpus.rate != spec.rate:
        raise ConfigError(f"the corpus is at {corpus.rate} Hz, the spec at {spec.rate} Hz")
    return spec


def _generate_sample(
    rng: np.random.Generator,
    corpus: AudioCorpus,
    by_digit: list[list[int]],
    spec: AudioSequenceSpec,
    tries: int = 100,
) -> AudioSequenceSample:
    """``generate_sample`` with the speakers of each digit worked out (once per batch)."""
    total = spec.samples
    for _ in range(tries):
        n = int(rng.integers(spec.min_clips, spec.max_clips + 1))
        digits = [int(d) for d in rng.integers(0, 10, size=n)]
        chosen = []
        for d in digits:
            speaker = by_digit[d][int(rng.integers(len(by_digit[d])))]
            clips = corpus.clips_of(speaker, d)
            chosen.append((speaker, clips[int(rng.integers(len(clips)))]))
        free = total - sum(len(c) for _, c in chosen)
        if free >= 0:
            break
    else:
        raise ConfigError(f"{spec.max_clips} clips do not fit in {spec.seconds} s ({tries} tries)")
    # Uniform over non-overlapping placements in this order: n sorted cut points in the
    # free time, each clip starting after the clips before it.
    gaps = np.sort(rng.integers(0, free + 1, size=n))
    wave = np.zeros(total, dtype=np.float32)
    spans, placements, start = [], [], 0
    for (speaker, clip), d, gap in zip(chosen, digits, gaps):
        begin = int(gap) + start
        wave[begin : begin + len(clip)] = clip
        start += len(clip)
        spans.append((d, *frame_span(begin, begin + len(clip), spec)))
        placements.append((d, speaker, begin, begin + len(clip)))
    if spec.noise > 0:
        wave += spec.noise * _truncated_normal(rng, total)
    np.clip(wave, -1.0, 1.0, out=wave)
    return AudioSequenceSample(mel_spectrogram(wave, spec), digits, spans, placements)


@lru_cache(maxsize=1)
def _truncated_normal_table(levels: int = 2**16) -> np.ndarray:
    """The ``levels`` quantiles (at the midpoints) of the standard normal truncated to [-1, 1]."""
    from scipy.special import ndtr, ndtri

    low = ndtr(-1.0)
    table = ndtri(low + (1 - 2 * low) * (np.arange(levels) + 0.5) / levels).astype(np.float32)
    table.setflags(write=False)
    return table


def _truncated_normal(rng: np.random.Generator, size: int) -> np.ndarray:
    """Standard normal draws truncated to [-1, 1]: uniform picks among 2^16 equally likely
    quantiles (inverse CDF; 7x faster than redrawing normals outside [-1, 1])."""
    return _truncated_normal_table().take(rng.integers(0, 2**16, size=size, dtype=np.uint16))


def generate_batch(
    seed: int,
    index: int,
    size: int,
    corpus: AudioCorpus,
    speakers: Sequence[int],
    spec: AudioSequenceSpec | None = None,
) -> list[AudioSequenceSample]:
    """``size`` samples, a pure function of (seed, index) for a given corpus and speakers."""
    spec = _checked_spec(corpus, spec)
    by_digit = _speakers_by_digit(corpus, speakers)
    rng = np.random.default_rng([seed, index])
    return [_generate_sample(rng, corpus, by_digit, spec) for _ in range(size)]


# --- the task -----------------------------------------------------------------------------------


@dataclass
class AudioSequenceData:
    """``data``: the clip corpus, clip counts and length, noise, evaluation set sizes."""

    corpus: str = ""  # AudioMNIST directory, or `sparling-genomics audio-corpus --out`
    seconds: float = bounded(15.0, above=0)
    min_clips: int = bounded(5, min=1)
    max_clips: int = bounded(10, min=1)
    noise: float = bounded(2.0**-10, min=0)
    val_size: int = bounded(500, min=1)
    test_size: int = bounded(1000, min=1)


@dataclass
class AudioSequenceModel:
    """``model``: the motif network g over mel frames, the sparse layer and the CTC head."""

    motif_channels: int = bounded(10, min=1)
    hidden: int = bounded(32, min=1)
    first_kernel: int = bounded(9, min=1)
    residual_units: int = bounded(3, min=0)
    unit_kernel: int = bounded(9, min=1)  # receptive field 9 + 3 * 8 = 33 frames, the paper's
    head_hidden: int = bounded(64, min=1)
    head_pool: int = bounded(4, min=1)
    head_layers: int = bounded(2, min=1)
    # No GRU: digits come in time order, so convolutions over frames read them; the
    # GRU cost ~40% of a step on 2 cores.
    head_recurrent: bool = False
    sparse: SparseSettings = field(default_factory=SparseSettings)


#: What audio_sequence sets in the shared ``train`` and ``annealing`` blocks.
DEFAULTS = {
    "train": {
        "eval_every": 2_000,
        "final_samples": 80_000,  # the rest of the budget
        # One core trains while the other makes the next batch (the spectrograms cost ~60% of
        # a step): 102 samples/s against 86 with two torch threads and no prefetching.
        "threads": 1,
        "prefetch": True,
    },
    "annealing": {
        # 6% per evaluation. Over a run the bar then falls about as far (3e-5 x ~180k
        # samples = 5.4) as the paper's (1e-7 x 6e7 = 6). At 1e-5 the first benchmark with
        # prefetching spent 38k samples at density 0.5 (unseen validation voices plateau
        # near 65-70% exact match, the bar starts at 1.0) and 32k waiting out the last
        # step, which left 8k of the 20k final samples (FNE 13.5%, E2EE 18%).
        "bar_decay_per_sample": 3e-5,
    },
}

PRESETS: dict[str, dict] = {
    "cpu": {},
    "paper": {
        "model": {"hidden": 64, "head_hidden": 256},
        "train": {
            "batch_size": 32,
            "lr": 0.001,
            "max_samples": 60_000_000,
            "max_seconds": 72_000.0,
            "eval_every": 20_000,
        },
        "annealing": {"bar_decay_per_sample": 1e-7},
        "data": {"val_size": 2000, "test_size": 5000},
    },
    "tiny": {
        "model": {"hidden": 8, "residual_units": 1, "head_hidden": 16},
        "data": {
            "val_size": 16,
            "test_size": 16,
            "seconds": 4.0,
            "min_clips": 2,
            "max_clips": 3,
        },
        "train": {
            "batch_size": 8,
            "max_samples": 96,
            "eval_every": 32,
            "eval_batch_size": 16,
            "final_samples": 32,
            "checkpoint_every_seconds": 0.0,
        },
        "annealing": {"bar_decay_per_sample": 1e-2, "stop_density": 0.05},
    },
}


class AudioSequenceTask(Task):
    """AudioMNISTSequence: a log-mel spectrogram of spoken digits -> the digits in time order.

    The corpus is ``data.corpus``: a real AudioMNIST directory or one written by
    ``sparling-genomics audio-corpus``. Train, validation and test use disjoint speakers
    (``split_speakers``), so test voices are unseen. ``g`` is the shared 1-D residual CNN
    over frames (64 mel bins in, 33-frame receptive field), the sparse layer the shared one
    (plain BatchNorm), and ``h`` a CTC head over time: digits come in time order, so CTC
    reads the string exactly. Channels are mapped many-to-one to digits for CE, as the paper.
    The spectrogram enters as ``(dB - max) / 20 + 2``: within [-2, 2] whatever the level.
    """

    name = "audio_sequence"
    symbols = [str(d) for d in DIGITS]
    ce_matching = "many_to_one"
    data_config = AudioSequenceData
    model_config = AudioSequenceModel
    defaults = DEFAULTS
    presets = PRESETS

    def __init__(self, config: RunConfig, seed: int) -> None:
        super().__init__(config, seed)
        from .audio_corpus import load_audiomnist, split_speakers

        data = config.data
        self.spec = AudioSequenceSpec(
            seconds=data.seconds,
            min_clips=data.min_clips,
            max_clips=data.max_clips,
            noise=data.noise,
        )
        self.spec.check()
        if not data.corpus:
            raise ConfigError(
                "audio_sequence needs data.corpus: an AudioMNIST directory "
                "(<speaker>/<digit>_<speaker>_<rep>.wav), or build one offline with "
                "`sparling-genomics audio-corpus --out DIR` and pass --set data.corpus=DIR"
            )
        self.corpus = load_audiomnist(Path(data.corpus))
        self.speakers = split_speakers(self.corpus.speakers)

    def _batch(self, samples: list[AudioSequenceSample]) -> Batch:
        spec = np.stack([s.spectrogram for s in samples])  # (N, frames, mels)
        spec = (spec - spec.max(axis=(1, 2), keepdims=True)) / 20.0 + 2.0
        x = torch.from_numpy(np.ascontiguousarray(spec.transpose(0, 2, 1), dtype=np.float32))
        cells: list[list[Cell]] = [
            [((slice(f0, f1),), d) for d, f0, f1 in s.spans] for s in samples
        ]
        return Batch(x, [s.digits for s in samples], cells)

    def train_batch(self, index: int, batch_size: int) -> Batch:
        return self._batch(
            generate_batch(self.seed, index, batch_size, self.corpus, self.speakers["train"],
                           self.spec)
        )  # fmt: skip

    def eval_batches(self, split: str, batch_size: int) -> Iterator[Batch]:
        def make(seed: int, index: int, size: int) -> Batch:
            speakers = self.speakers[split]
            return self._batch(generate_batch(seed, index, size, self.corpus, speakers, self.spec))

        return self.generated_eval_batches(split, batch_size, make)

    def swappable_symbols(self) -> list[int]:
        return list(DIGITS)

    def swap_output(self, target, cells, index, symbol):
        """Spans are in time order, as the output: digit ``index`` changes."""
        if index >= len(target) or target[index] != cells[index][1]:
            return None
        out = list(target)
        out[index] = symbol
        return out

    def true_density(self) -> float:
        mean_clips = (self.spec.min_clips + self.spec.max_clips) / 2
        return mean_clips / (self.config.model.motif_channels * self.spec.frames)

    def build_model(self, *, sparse: bool = True) -> SparlingModel:
        m = self.config.model
        k = m.motif_channels
        g = MotifModel1D(
            k,
            in_channels=self.spec.n_mels,
            hidden=m.hidden,
            first_kernel=m.first_kernel,
            residual_units=m.residual_units,
            unit_kernel=m.unit_kernel,
            reverse_complement=False,
        )
        start = self.config.annealing.start_density
        layer = SpatialSparsity.from_config(k, start, m.sparse) if sparse else None
        h = CTCSequenceHead1D(
            k,
            len(self.symbols),
            hidden=m.head_hidden,
            pool=m.head_pool,
            layers=m.head_layers,
            recurrent=m.head_recurrent,
        )
        return SparlingModel(g, layer, h)

    def loss(self, outputs: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
        return ctc_loss(outputs["logits"], batch.targets)

    def decode(self, outputs: dict[str, torch.Tensor]) -> list[list[int]]:
        return ctc_greedy_decode(outputs["logits"])
