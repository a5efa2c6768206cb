"""The espeak-ng corpus: AudioMNIST's layout at 8 kHz, trimmed clips, resume after a kill, a
one-line error without espeak-ng, and sequences of its digits with energy inside the spans."""

import json
import shutil

import numpy as np
import pytest
from scipy.io import wavfile

from sparling_genomics.domains.espeak_corpus import MANIFEST, build_espeak_corpus
from sparling_genomics.domains.spoken_digits import load_audiomnist, split_speakers
from sparling_genomics.errors import ConfigError, InputError
from tests.conftest import NO_ESPEAK

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason=NO_ESPEAK)


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
    from sparling_genomics.domains.audio_sequence import generate_batch

    corpus = load_audiomnist(espeak_corpus)
    for sample in generate_batch(0, 0, 5, corpus, split_speakers(corpus.speakers)["train"]):
        inside = np.zeros(len(sample.spectrogram), bool)
        for _, f0, f1 in sample.spans:
            inside[f0:f1] = True
        loudest = sample.spectrogram.max(1)
        assert loudest[inside].mean() > loudest[~inside].max() + 20
        assert all(loudest[f0:f1].max() > loudest[~inside].max() + 20 for _, f0, f1 in sample.spans)
