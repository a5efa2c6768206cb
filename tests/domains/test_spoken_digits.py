"""Spoken-digit corpora: the AudioMNIST loader on hand-made trees, its one-line errors, and the
speaker-disjoint splits."""

import os
import shutil

import numpy as np
import pytest
from scipy.io import wavfile

from sparling_genomics.domains.spoken_digits import load_audiomnist, split_speakers
from sparling_genomics.errors import InputError


def tone(freq: float, seconds: float, rate: int, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return amplitude * np.sin(2 * np.pi * freq * t)


def write_tree(base, speakers=(1, 2), digits=range(10), reps=(0,), rate=48000):
    """AudioMNIST's layout: base/<ss>/<d>_<ss>_<r>.wav, 16-bit, digit d a (300 + 100 d) Hz tone."""
    for s in speakers:
        (base / f"{s:02d}").mkdir(parents=True, exist_ok=True)
        for d in digits:
            for r in reps:
                pcm = (tone(300 + 100 * d, 0.25 + 0.05 * r, rate) * 32767).astype(np.int16)
                wavfile.write(base / f"{s:02d}" / f"{d}_{s:02d}_{r}.wav", rate, pcm)


def peak_hz(wave: np.ndarray, rate: int = 8000) -> float:
    spectrum = np.abs(np.fft.rfft(wave * np.hanning(len(wave))))
    return float(np.fft.rfftfreq(len(wave), 1 / rate)[spectrum.argmax()])


# --- the loader ----------------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["root", "data"])
def test_loader_reads_a_48khz_tree_under_data_resampled_to_8khz(tmp_path, given):
    write_tree(tmp_path / "AudioMNIST" / "data", reps=(0, 1))
    (tmp_path / "AudioMNIST" / "data" / "audioMNIST_meta.txt").write_text("{}")
    root = tmp_path / "AudioMNIST" if given == "root" else tmp_path / "AudioMNIST" / "data"
    corpus = load_audiomnist(root)
    assert corpus.speakers == [1, 2] and corpus.rate == 8000 and len(corpus) == 40
    assert corpus.source_rates == {48000: 40}
    assert corpus.count_per_digit() == {d: 4 for d in range(10)}
    for d in (0, 5, 9):
        short, long = corpus.clips_of(2, d)  # repetition order: 0.25 s, then 0.30 s
        assert short.dtype == np.float32 and len(short) == 2000 and len(long) == 2400
        assert abs(peak_hz(long) - (300 + 100 * d)) < 8000 / 2400
        assert 0.45 < np.abs(short).max() < 0.55


def test_loader_takes_stereo_float_8bit_and_other_rates(tmp_path):
    write_tree(tmp_path, speakers=(3,), digits=range(1, 10), rate=8000)
    left, right = tone(440, 0.5, 44100, 0.8), tone(440, 0.5, 44100, 0.2)
    stereo = np.stack([left, right], 1).astype(np.float32)
    wavfile.write(tmp_path / "03" / "0_03_0.wav", 44100, stereo)
    wavfile.write(tmp_path / "03" / "0_03_1.wav", 16000,
                  ((tone(440, 0.5, 16000) + 1) * 127.5).astype(np.uint8))  # fmt: skip
    corpus = load_audiomnist(tmp_path)
    stereo, eight_bit = corpus.clips_of(3, 0)
    assert len(stereo) == 4000 and abs(np.abs(stereo).max() - 0.5) < 0.02  # channels averaged
    assert abs(peak_hz(stereo) - 440) < 3 and abs(peak_hz(eight_bit) - 440) < 3
    assert abs(np.abs(eight_bit).max() - 0.5) < 0.02
    assert corpus.source_rates == {8000: 9, 44100: 1, 16000: 1}


def test_loader_ignores_hidden_files_such_as_a_killed_writes_temp(tmp_path):
    write_tree(tmp_path, speakers=(1,))
    (tmp_path / "01" / ".0_01_1.wav.tmp-host-1-x.wav").write_bytes(b"half")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.wav").write_bytes(b"")
    assert len(load_audiomnist(tmp_path)) == 10


def _corrupt(base):
    (base / "01" / "4_01_0.wav").write_bytes(b"RIFF\x10\x00\x00\x00WAVEjunk")


def _truncate(base):
    path = base / "01" / "4_01_0.wav"
    path.write_bytes(path.read_bytes()[:30])


@pytest.mark.parametrize(
    "break_it, message",
    [
        (lambda b: shutil.rmtree(b / "01") or shutil.rmtree(b / "02"), "no .wav files"),
        (lambda b: os.replace(b / "01" / "3_01_0.wav", b / "3_01_0.wav"),
         "not in a speaker folder"),
        (lambda b: os.replace(b / "01" / "3_01_0.wav", b / "01" / "three_01_0.wav"),
         "name is not <digit>_<speaker>_<repetition>.wav"),
        (lambda b: os.replace(b / "02" / "3_02_0.wav", b / "01" / "3_02_0.wav"),
         "speaker 02 in the name but folder 01"),
        (_corrupt, "4_01_0.wav: not a readable WAV file"),
        (_truncate, "4_01_0.wav: not a readable WAV file"),
        (lambda b: [os.remove(b / f"{s:02d}" / f"7_{s:02d}_0.wav") for s in (1, 2)],
         "no clip of digit 7 for any speaker"),
    ],
    ids=["no-wavs", "not-in-speaker-folder", "bad-name", "speaker-mismatch", "corrupt",
         "truncated", "no-7"],
)  # fmt: skip
def test_loader_errors_are_one_line_naming_the_path(tmp_path, break_it, message):
    write_tree(tmp_path)
    load_audiomnist(tmp_path)  # whole, it loads
    break_it(tmp_path)
    with pytest.raises(InputError, match=message) as info:
        load_audiomnist(tmp_path)
    text = str(info.value)
    assert "\n" not in text and str(tmp_path) in text


def test_loader_refuses_a_missing_directory(tmp_path):
    with pytest.raises(InputError, match="not a directory"):
        load_audiomnist(tmp_path / "nope")


# --- splits ---------------------------------------------------------------------------------------


def test_sixty_speakers_split_as_the_papers_code_with_validation_from_its_train_part():
    split = split_speakers(range(1, 61))
    assert [len(split[k]) for k in ("train", "val", "test")] == [45, 6, 9]
    # The paper's code: speakers 1..60 shuffled by RandomState(0); positions 52-60 test.
    order = list(range(1, 61))
    np.random.RandomState(0).shuffle(order)
    assert split["test"] == sorted(order[51:])
    assert sorted(split["train"] + split["val"]) == sorted(order[:51])
    assert split["val"] == sorted(order[45:51])


@pytest.mark.parametrize("n, sizes", [(3, [1, 1, 1]), (10, [7, 1, 2]), (20, [15, 2, 3])])
def test_smaller_corpora_split_proportionally_and_disjointly(n, sizes):
    speakers = list(range(5, 5 + n))
    split = split_speakers(speakers)
    assert [len(split[k]) for k in ("train", "val", "test")] == sizes
    assert sorted(split["train"] + split["val"] + split["test"]) == speakers


def test_fewer_than_three_speakers_cannot_be_split():
    with pytest.raises(InputError, match="at least 3"):
        split_speakers([1, 2])
