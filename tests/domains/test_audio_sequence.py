"""AudioMNISTSequence data: the log-mel spectrogram against torch.stft and the HTK formula, and
samples that are deterministic from a seed with spans where the audio is."""

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from sparling_genomics.domains.audio_sequence import (
    AudioSequenceSpec,
    _truncated_normal,
    frame_span,
    generate_batch,
    generate_sample,
    hz_to_mel,
    mel_filterbank,
    mel_spectrogram,
    power_spectrogram,
)
from sparling_genomics.domains.spoken_digits import AudioCorpus
from sparling_genomics.errors import ConfigError, InputError

SPEC = AudioSequenceSpec()


def tone(freq: float, samples: int, rate: int = 8000, amplitude: float = 0.5) -> np.ndarray:
    return (amplitude * np.sin(2 * np.pi * freq * np.arange(samples) / rate)).astype(np.float32)


def digit_hz(digit: int) -> float:
    return 400.0 + 300.0 * digit


@pytest.fixture(scope="module")
def corpus() -> AudioCorpus:
    """Four speakers; digit d is a (400 + 300 d) Hz tone of 0.3-0.9 s, so its mel bin is known."""
    rng = np.random.default_rng(0)
    clips = {(s, d): [tone(digit_hz(d), int(rng.integers(2400, 7200))) for _ in range(3)]
             for s in (1, 2, 3, 4) for d in range(10)}  # fmt: skip
    return AudioCorpus(Path("synthetic"), clips, [1, 2, 3, 4])


# --- the spectrogram --------------------------------------------------------------------------


def test_fifteen_seconds_give_642_frames_of_64_mels():
    assert SPEC.frames == 642
    out = mel_spectrogram(np.zeros(SPEC.samples, np.float32) + tone(1000, SPEC.samples))
    assert out.shape == (642, 64) and out.dtype == np.float32


def test_power_spectrogram_is_torch_stft_with_a_periodic_hann_window():
    wave = np.random.default_rng(1).standard_normal(12_345).astype(np.float32)
    ours = power_spectrogram(wave, 375, 187)
    theirs = torch.stft(torch.from_numpy(wave), 375, 187, 375, torch.hann_window(375), center=True,
                        pad_mode="reflect", normalized=False, onesided=True,
                        return_complex=True).abs().pow(2).T.numpy()  # fmt: skip
    assert ours.shape == theirs.shape == (1 + 12_345 // 187, 188)
    assert np.allclose(ours, theirs, rtol=1e-4, atol=1e-3 * theirs.max())


def test_a_bin_centred_tone_has_the_hann_windows_power():
    # A tone of amplitude A on FFT bin k: |X_k| = A * sum(window) / 2 = A * n_fft / 4.
    k = 47
    power = power_spectrogram(tone(k * 8000 / 375, 8000, amplitude=0.5), 375, 187)
    middle = power[10:-10]
    assert np.all(middle.argmax(1) == k)
    assert np.allclose(middle[:, k], (0.5 * 375 / 4) ** 2, rtol=1e-3)


def test_filterbank_is_htk_triangles_without_normalisation():
    assert abs(float(hz_to_mel(1000.0)) - 1000.0) < 0.1  # HTK: 1000 Hz is 1000 mel
    fb = mel_filterbank(8000, 375, 64)
    assert fb.shape == (188, 64)
    # Direct formula: centres equally spaced in HTK mel from 0 to 4 kHz.
    edges_mel = np.linspace(0, 2595 * np.log10(1 + 4000 / 700), 66)
    edges = 700 * (10 ** (edges_mel / 2595) - 1)
    for m in (0, 1, 20, 63):
        for k in range(188):
            f = k * 4000 / 187
            rise = (f - edges[m]) / (edges[m + 1] - edges[m])
            fall = (edges[m + 2] - f) / (edges[m + 2] - edges[m + 1])
            assert fb[k, m] == pytest.approx(max(0.0, min(rise, fall)), abs=1e-5)
    assert fb.max() <= 1 and (fb.sum(0) > 0).all()  # no empty filter at 375 / 64


@pytest.mark.parametrize("m", [12, 30, 45, 62])
def test_a_pure_tone_peaks_in_the_mel_bin_centred_on_it(m):
    edges = 700 * (10 ** (np.linspace(0, 2595 * np.log10(1 + 4000 / 700), 66) / 2595) - 1)
    out = mel_spectrogram(tone(edges[m + 1], 16000))
    assert np.bincount(out[5:-5].argmax(1)).argmax() == m


def test_decibels_are_clamped_top_db_below_the_maximum():
    wave = np.zeros(SPEC.samples, np.float32)
    wave[50_000:52_000] = tone(1000, 2000)
    out = mel_spectrogram(wave)
    assert out.max() - out.min() == pytest.approx(80, abs=1e-3)
    assert np.all(out[:200] == out.min())  # silence: the floor
    silent = mel_spectrogram(np.zeros(8000, np.float32))
    # 10 log10(1e-10), computed in float32 (-100.00001 with numpy 2.4)
    np.testing.assert_allclose(silent, -100, atol=1e-3)


def test_frame_span_is_the_frames_whose_window_overlaps_the_samples():
    rng = np.random.default_rng(2)
    left, right = SPEC.n_fft // 2, SPEC.n_fft - SPEC.n_fft // 2
    for _ in range(300):
        start = int(rng.integers(0, SPEC.samples - 1))
        end = int(rng.integers(start + 1, min(SPEC.samples, start + 9000) + 1))
        if rng.random() < 0.1:
            start, end = (0, end) if rng.random() < 0.5 else (start, SPEC.samples)
        overlapping = [t for t in range(SPEC.frames)
                       if t * SPEC.hop - left < end and t * SPEC.hop + right > start]  # fmt: skip
        assert frame_span(start, end, SPEC) == (overlapping[0], overlapping[-1] + 1)


# --- samples -------------------------------------------------------------------------------------


def test_same_seed_same_batch_other_index_other_batch(corpus):
    a = generate_batch(3, 7, 3, corpus, [1, 2, 3])
    b = generate_batch(3, 7, 3, corpus, [3, 2, 1])  # speaker order does not matter
    c = generate_batch(3, 8, 3, corpus, [1, 2, 3])
    for x, y in zip(a, b):
        assert np.array_equal(x.spectrogram, y.spectrogram)
        assert (x.digits, x.spans, x.placements) == (y.digits, y.spans, y.placements)
    assert all(not np.array_equal(x.spectrogram, z.spectrogram) for x, z in zip(a, c))


def test_clips_do_not_overlap_come_in_time_order_and_spans_cover_them(corpus):
    rng = np.random.default_rng(4)
    counts, speakers = Counter(), Counter()
    for _ in range(40):
        s = generate_sample(rng, corpus, [2, 4])
        assert 5 <= len(s.digits) <= 10 and s.spectrogram.shape == (642, 64)
        assert s.digits == [d for d, *_ in s.spans] == [d for d, *_ in s.placements]
        previous_end = 0
        for (digit, speaker, start, end), span in zip(s.placements, s.spans):
            assert previous_end <= start < end <= SPEC.samples
            assert end - start in {len(c) for c in corpus.clips_of(speaker, digit)}
            assert span[1:] == frame_span(start, end, SPEC)
            previous_end = end
            speakers[speaker] += 1
        counts[len(s.digits)] += 1
    assert set(speakers) == {2, 4} and set(counts) == set(range(5, 11))


def test_energy_is_inside_the_spans_and_each_span_sounds_its_digit(corpus):
    rng = np.random.default_rng(5)
    fb = mel_filterbank(8000, 375, 64)
    for _ in range(10):
        s = generate_sample(rng, corpus, [1, 3])
        inside = np.zeros(642, bool)
        for digit, f0, f1 in s.spans:
            inside[f0:f1] = True
            # The clip's tone is the loudest mel bin in the middle of its span.
            mid = s.spectrogram[(f0 + f1) // 2]
            expected = fb[round(digit_hz(digit) * 375 / 8000)].argmax()
            assert abs(int(mid.argmax()) - int(expected)) <= 1
        loudest = s.spectrogram.max(1)  # per frame
        assert loudest[inside].mean() > loudest[~inside].max() + 30
        assert all(loudest[(f0 + f1) // 2] > loudest[~inside].max() + 40 for _, f0, f1 in s.spans)


def test_without_noise_every_frame_outside_the_spans_is_silent(corpus):
    spec = AudioSequenceSpec(noise=0.0)
    s = generate_sample(np.random.default_rng(6), corpus, [1, 2, 3, 4], spec)
    inside = np.zeros(642, bool)
    for _, f0, f1 in s.spans:
        inside[f0:f1] = True
        assert s.spectrogram[f0:f1].max() > s.spectrogram.min()
    assert np.all(s.spectrogram[~inside] == s.spectrogram.min())


def test_noise_is_the_papers_truncated_normal():
    x = _truncated_normal(np.random.default_rng(7), 200_000)
    assert np.abs(x).max() <= 1 and abs(x.mean()) < 0.01
    assert abs(x.std() - 0.5396) < 0.005  # truncnorm(-1, 1).std()


def test_unknown_speakers_missing_digits_and_bad_specs_are_refused(corpus):
    rng = np.random.default_rng(0)
    with pytest.raises(InputError, match=r"speaker\(s\) \[9\] not in the corpus"):
        generate_sample(rng, corpus, [1, 9])
    partial = AudioCorpus(Path("p"), {k: v for k, v in corpus.clips.items() if k[1] != 4},
                          corpus.speakers)  # fmt: skip
    with pytest.raises(InputError, match="no clip of digit 4"):
        generate_sample(rng, partial, [1])
    with pytest.raises(ConfigError, match="min_clips"):
        generate_sample(rng, corpus, [1], AudioSequenceSpec(min_clips=6, max_clips=5))
    with pytest.raises(ConfigError, match="do not fit"):
        generate_sample(rng, corpus, [1], AudioSequenceSpec(seconds=1.0))
