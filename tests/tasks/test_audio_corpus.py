"""Spoken-digit corpora: the AudioMNIST loader on hand-made trees, its one-line errors, the
espeak-ng build (layout, trimming, resume) and the speaker-disjoint splits."""

import json
import os
import shutil

import numpy as np
import pytest
from scipy.io import wavfile

from sparling_genomics.errors import ConfigError, InputError
from sparling_genomics.tasks.audio_corpus import (
    MANIFEST,
    build_espeak_corpus,
    load_audiomnist,
    split_speakers,
)

NO_ESPEAK = "espeak-ng is not installed (apt-get install espeak-ng)"
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason=NO_ESPEAK)


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


# --- the espeak-ng corpus ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def espeak_corpus(tmp_path_factory):
    if shutil.which("espeak-ng") is None:
        pytest.skip(NO_ESPEAK)
    out = tmp_path_factory.mktemp("espeak") / "corpus"
    build_espeak_corpus(out, speakers=3, repetitions=1, seed=0)
    return out


@needs_espeak
def test_espeak_corpus_has_audiomnists_layout_at_8khz_16bit(espeak_corpus):
    names = sorted(str(p.relative_to(espeak_corpus)) for p in espeak_corpus.rglob("*.wav"))
    assert names == sorted(f"{s:02d}/{d}_{s:02d}_0.wav" for s in (1, 2, 3) for d in range(10))
    rate, pcm = wavfile.read(espeak_corpus / "02" / "7_02_0.wav")
    assert rate == 8000 and pcm.dtype == np.int16 and pcm.ndim == 1
    manifest = json.loads((espeak_corpus / MANIFEST).read_text())
    assert manifest["complete"] is True
    voices = [tuple(v.values()) for v in manifest["voices"].values()]
    assert len(set(voices)) == 3 and len({v[0] for v in voices}) == 3


@needs_espeak
def test_espeak_clips_load_back_trimmed_and_differ_between_speakers(espeak_corpus):
    corpus = load_audiomnist(espeak_corpus)
    assert corpus.speakers == [1, 2, 3] and len(corpus) == 30
    assert corpus.source_rates == {8000: 30}
    for (_speaker, _digit), [clip] in corpus.clips.items():
        assert 0.15 < len(clip) / 8000 < 1.2
        loud = np.flatnonzero(np.abs(clip) >= 0.01 * np.abs(clip).max())
        assert loud[0] <= 81 and len(clip) - 1 - loud[-1] <= 81  # 10 ms margins only
        assert 0.29 < np.abs(clip).max() < 0.91
    a, b = corpus.clips_of(1, 4)[0], corpus.clips_of(2, 4)[0]
    assert len(a) != len(b) or not np.allclose(a, b)


@needs_espeak
def test_espeak_build_refuses_foreign_or_different_folders_and_is_a_no_op_when_done(
    espeak_corpus, tmp_path
):
    before = {p: p.stat().st_mtime_ns for p in espeak_corpus.rglob("*")}
    assert build_espeak_corpus(espeak_corpus, speakers=3, repetitions=1, seed=0) == espeak_corpus
    assert {p: p.stat().st_mtime_ns for p in espeak_corpus.rglob("*")} == before
    with pytest.raises(InputError, match="speakers=3, repetitions=1, seed=0; rerun with those"):
        build_espeak_corpus(espeak_corpus, speakers=3, repetitions=2, seed=0)
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty and not an espeak-ng corpus build"):
        build_espeak_corpus(tmp_path, speakers=3, repetitions=1)
    with pytest.raises(ConfigError, match="1..999"):
        build_espeak_corpus(tmp_path / "new", speakers=0)


@needs_espeak
def test_killed_espeak_build_is_refused_by_the_loader_and_completed_by_a_rerun(
    espeak_corpus, tmp_path
):
    out = tmp_path / "corpus"
    shutil.copytree(espeak_corpus, out)
    # As a SIGKILL leaves it: some WAVs missing, a temp file of a dead writer, not complete.
    originals = {name: (out / name).read_bytes() for name in ("01/3_01_0.wav", "03/9_03_0.wav")}
    for name in originals:
        (out / name).unlink()
    from sparling_genomics import io

    stale = out / "01" / f".3_01_0.wav.tmp-{io._HOST}-999999999-abc.wav"
    stale.write_bytes(b"RIFF half")
    manifest = json.loads((out / MANIFEST).read_text())
    (out / MANIFEST).write_text(json.dumps({**manifest, "complete": False}))
    with pytest.raises(InputError, match="unfinished espeak-ng build"):
        load_audiomnist(out)
    build_espeak_corpus(out, speakers=3, repetitions=1, seed=0)
    for name, data in originals.items():
        assert (out / name).read_bytes() == data  # same clip: pure in (seed, speaker, digit, rep)
    assert not stale.exists()
    assert json.loads((out / MANIFEST).read_text())["complete"] is True
    assert len(load_audiomnist(out)) == 30


def test_espeak_missing_is_one_line_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(ConfigError) as info:
        build_espeak_corpus(tmp_path / "corpus", speakers=3, repetitions=1)
    assert str(info.value) == (
        "espeak-ng not found: install it (apt-get install espeak-ng) or give a real AudioMNIST "
        "directory"
    )
    assert not (tmp_path / "corpus").exists()


@needs_espeak
def test_sequences_of_espeak_digits_have_their_energy_inside_the_spans(espeak_corpus):
    from sparling_genomics.tasks.audio_sequence import generate_batch

    corpus = load_audiomnist(espeak_corpus)
    for sample in generate_batch(0, 0, 5, corpus, split_speakers(corpus.speakers)["train"]):
        inside = np.zeros(len(sample.spectrogram), bool)
        for _, f0, f1 in sample.spans:
            inside[f0:f1] = True
        loudest = sample.spectrogram.max(1)
        assert loudest[inside].mean() > loudest[~inside].max() + 20
        assert all(loudest[f0:f1].max() > loudest[~inside].max() + 20 for _, f0, f1 in sample.spans)


def test_tiny_audio_sequence_train_end_to_end(cli, espeak_corpus, tmp_path):
    out = tmp_path / "run"
    result = cli("train", "--task", "audio_sequence", "--preset", "tiny", "--out", out,
                 "--set", f"data.corpus={espeak_corpus}", "--no-progress")  # fmt: skip
    assert result.returncode == 0, result.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["motif"]["ce_matching"] == "many_to_one" and "perturbation" in metrics


def test_audio_task_without_a_corpus_names_the_builder(cli, tmp_path):
    result = cli("train", "--task", "audio_sequence", "--preset", "tiny", "--out",
                 tmp_path / "run", "--no-progress")  # fmt: skip
    assert result.returncode == 2
    assert "sparling-genomics audio-corpus" in result.stderr
    assert not (tmp_path / "run").exists()


def test_audio_cells_are_the_clips_spans_and_a_swap_changes_that_digit(espeak_corpus):
    from sparling_genomics.config import resolve_config
    from sparling_genomics.tasks.audio_sequence import AudioSequenceTask

    config = resolve_config(
        "audio_sequence", "tiny", overrides=[{"data": {"corpus": str(espeak_corpus)}}]
    )
    task = AudioSequenceTask(config, 0)
    batch = task.train_batch(0, 4)
    assert batch.x.shape == (4, 64, task.spec.frames)
    assert float(batch.x.max()) == 2.0 and float(batch.x.min()) >= -2.0
    for target, cells in zip(batch.targets, batch.cells):
        assert [s for _, s in cells] == target
    target, cells = batch.targets[0], batch.cells[0]
    new = (target[0] + 1) % 10
    assert task.swap_output(target, cells, 0, new) == [new] + target[1:]
