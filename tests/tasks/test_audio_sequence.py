"""The AudioMNISTSequence task: a tiny run on an espeak-ng corpus, the error without a corpus,
cells on the clips' spans and swaps."""

import json


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
    from sparling_genomics.tasks.audio_sequence import AudioSequenceTask
    from sparling_genomics.train.run_config import resolve_config

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
