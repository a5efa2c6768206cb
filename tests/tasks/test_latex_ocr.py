"""The LaTeX-OCR task: its cells on the strided map, swaps, the length curriculum, a tiny run."""

import json

import pytest

from sparling_genomics.domains.latex import generate_batch
from sparling_genomics.domains.latex_grammar import SYMBOLS
from sparling_genomics.errors import ConfigError


def _task(data: dict | None = None, **model):
    from sparling_genomics.tasks.latex_ocr import LatexOcrTask
    from sparling_genomics.train.run_config import resolve_config

    config = resolve_config("latex_ocr", "tiny", overrides=[{"model": model, "data": data or {}}])
    return LatexOcrTask(config, 0)


def test_cells_cover_each_symbols_box_on_the_stride_2_map():
    task = _task()
    samples = generate_batch(0, 0, 8, task.spec)
    batch = task._batch(samples)
    assert batch.x.shape == (8, 1, task.spec.height, task.spec.width)
    for sample, cells in zip(samples, batch.cells):
        assert len(cells) == len(sample.boxes)
        for ((rows, cols), symbol), (k, r0, r1, c0, c1) in zip(cells, sample.boxes):
            assert symbol == k
            # map position i is centred on pixel 2i: the cell holds every position in the box
            assert rows.start == -(-r0 // 2) and rows.stop == (r1 - 1) // 2 + 1
            assert cols.start == -(-c0 // 2) and cols.stop == (c1 - 1) // 2 + 1


def test_swap_changes_the_token_of_that_box_only():
    from sparling_genomics.tasks.latex_ocr import TOKENS

    task = _task()
    target = [TOKENS.index(t) for t in ["x", "^{", "2", "}", "+", "1"]]
    cells = [((slice(0, 1), slice(0, 1)), SYMBOLS.index(s)) for s in ["x", "2", "+", "1"]]
    swapped = task.swap_output(target, cells, 1, SYMBOLS.index("a"))
    assert [TOKENS[t] for t in swapped] == ["x", "^{", "a", "}", "+", "1"]
    assert task.swap_output(target, cells, 2, SYMBOLS.index("a")) is None  # '+' is not swapped


def test_tiny_latex_train_end_to_end(cli, tmp_path):
    out = tmp_path / "run"
    result = cli("train", "--task", "latex_ocr", "--preset", "tiny", "--out", out,
                 "--no-progress")  # fmt: skip
    assert result.returncode == 0, result.stderr
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["motif"]["ce_matching"] == "many_to_one"
    assert 0 <= metrics["e2e"]["edit_error"] <= 1 and "perturbation" in metrics
    # The report: annealing curve, the Figure-4 plot (errors against density) and each
    # channel's glyph (mean input patch), no DNA export
    result = cli("report", "--model", out)
    assert result.returncode == 0, result.stderr
    text = (out / "report.html").read_text()
    assert text.count("data:image/png;base64,") == 3 and "apply to DNA tasks" in text
    assert 'alt="channel glyphs"' in text
    assert "sparling-genomics export" not in text


def test_length_curriculum_grows_training_expressions_and_leaves_evaluation_alone():
    full = {"max_tokens": 30}
    task = _task(data={**full, "curriculum_samples": 1000, "curriculum_start_tokens": 4})
    assert [task.training_spec(n).max_tokens for n in (0, 500, 999, 1000, 10**6)] == [
        4, 17, 29, 30, 30,
    ]  # fmt: skip
    early = task.train_batch(0, 16)
    assert max(len(t) for t in early.targets) <= 4
    later = task.train_batch(10**6, 16)
    assert later.targets == task._batch(generate_batch(0, 10**6, 16, task.spec)).targets
    plain = _task(data=full)
    assert plain.training_spec(0) == plain.spec
    first_eval = next(task.eval_batches("val", 8))
    assert first_eval.targets == next(plain.eval_batches("val", 8)).targets
    with pytest.raises(ConfigError, match="curriculum"):
        _task(data={**full, "curriculum_samples": 10, "curriculum_start_tokens": 40})
    # The start length is only checked when the curriculum is on (tiny: max_tokens 6 < 40).
    assert _task(data={"curriculum_start_tokens": 40}).training_spec(0).max_tokens == 6


def test_loss_gated_curriculum_grows_when_the_running_loss_is_low():
    task = _task(data={"max_tokens": 12, "curriculum_loss": 0.5, "curriculum_start_tokens": 4})
    assert task.training_spec(10**6).max_tokens == 4
    assert max(len(t) for t in task.train_batch(0, 16).targets) <= 4
    for _ in range(300):  # a loss above the gate: no growth, however long
        task.track_loss(1.0)
    assert task.training_state() == {"curriculum_tokens": 4}
    lengths = []
    for _ in range(1000):
        task.track_loss(0.1)
        lengths.append(task.curriculum_tokens)
    # Each growth waits 100 batches at the new length and then for the mean to fall.
    grew_at = [i for i in range(1, len(lengths)) if lengths[i] != lengths[i - 1]]
    assert [lengths[i] for i in grew_at] == [6, 8, 10, 12]
    assert all(b - a >= 100 for a, b in zip(grew_at, grew_at[1:]))
    assert task.training_spec(0) == task.spec
    assert _task().training_state() == {}
    with pytest.raises(ConfigError, match="choose one"):
        _task(data={"curriculum_loss": 0.5, "curriculum_samples": 100})


def test_curriculum_dwell_grows_the_length_whatever_the_loss():
    task = _task(data={"max_tokens": 8, "curriculum_loss": 0.5, "curriculum_start_tokens": 4,
                       "curriculum_dwell": 64})  # fmt: skip
    lengths = []
    for _ in range(6):
        task.track_loss(9.0, 16)  # a loss far above the gate
        lengths.append(task.curriculum_tokens)
    assert lengths == [4, 4, 4, 6, 6, 6]  # 64 samples at a length, then 2 tokens more


def test_annealing_waits_for_the_full_grammar():
    task = _task(data={"max_tokens": 6, "curriculum_loss": 0.5, "curriculum_start_tokens": 4})
    assert not task.ready_to_anneal()  # nothing drawn yet
    task.train_batch(0, 4)
    assert not task.ready_to_anneal()
    task.load_training_state({"curriculum_tokens": 6})  # as a resumed run restores it
    assert task.training_state() == {"curriculum_tokens": 6} and not task.ready_to_anneal()
    task.train_batch(1, 4)
    assert task.ready_to_anneal()
    linear = _task(data={"max_tokens": 6, "curriculum_samples": 100, "curriculum_start_tokens": 2})
    linear.train_batch(0, 50)  # starts at sample 0: at most 2 tokens
    assert not linear.ready_to_anneal()
    linear.train_batch(2, 50)  # starts at sample 100: the full grammar
    assert linear.ready_to_anneal()
    plain = _task()
    plain.train_batch(0, 4)
    assert plain.ready_to_anneal()


def test_loss_gated_curriculum_holds_annealing_and_resumes_at_its_length(cli, tmp_path):
    from sparling_genomics.train.checkpoint import load_checkpoint, restore_trainer
    from sparling_genomics.train.run_config import load_saved_config
    from sparling_genomics.train.trainer import Trainer

    out = tmp_path / "run"
    result = cli("train", "--task", "latex_ocr", "--preset", "tiny", "--out", out,
                 "--no-progress", "--set", "data.curriculum_loss=0.001",
                 "--set", "data.curriculum_start_tokens=2", "--set", "data.curriculum_step=1",
                 "--set", "data.curriculum_dwell=32")  # fmt: skip
    assert result.returncode == 0, result.stderr
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    evaluated = [r for r in log if "val_edit_error" in r]
    assert evaluated and [r["curriculum_tokens"] for r in evaluated] != [2] * len(evaluated)
    held = [r for r in evaluated if r["phase"] == "anneal" and r["curriculum_tokens"] < 6]
    assert held and all(r["held"] and not r["tightened"] and r["density"] == 0.5 for r in held)
    # The checkpoint keeps the length; a resumed trainer goes on from it.
    payload = load_checkpoint(out / "checkpoints" / "last.pt")
    assert payload["task"] == {"curriculum_tokens": evaluated[-1]["curriculum_tokens"]}
    trainer = Trainer(load_saved_config(out / "config.yaml"), tmp_path / "again", progress=False)
    assert trainer.task.curriculum_tokens == 2
    restore_trainer(trainer, out / "checkpoints" / "last.pt")
    assert trainer.task.curriculum_tokens == payload["task"]["curriculum_tokens"]
