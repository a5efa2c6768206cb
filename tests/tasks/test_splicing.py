"""The splicing task on the tiny reference: batches, models, a tiny end-to-end train."""

import json

import numpy as np
import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.tasks.splicing import SplicingTask
from sparling_genomics.train.core_phase import train_core
from sparling_genomics.train.run_config import resolve_config


def _task(dataset, **model):
    config = resolve_config(
        "splicing", "tiny", overrides=[{"data": {"dataset": str(dataset)}, "model": model}]
    )
    return SplicingTask(config, seed=0)


def test_batches_are_deterministic_and_cover_each_epoch(tiny_dataset):
    task = _task(tiny_dataset)
    a, b = task.train_batch(3, 4), task.train_batch(3, 4)
    assert torch.equal(a.x, b.x) and torch.equal(a.y, b.y)
    assert a.x.shape == (4, 4, 1400) and a.y.shape == (4, 1000)
    n = len(task.train_index)
    seen = torch.cat([task.train_batch(i, 1).x.sum(dim=(1, 2)) for i in range(n)])
    total = torch.stack(
        [torch.from_numpy(task.data.read(np.array([i]))[0]).sum() for i in task.train_index]
    )
    assert sorted(seen.tolist()) == sorted(total.tolist())  # one epoch = every window once


def test_a_class_list_with_a_repeat_or_without_none_first_is_named_as_such(tiny_dataset):
    """Not the dataset-mismatch message, which would send the user to rebuild the dataset."""

    def with_classes(classes):
        config = resolve_config(
            "splicing", "tiny",
            overrides=[{"data": {"dataset": str(tiny_dataset), "classes": classes}}],
        )  # fmt: skip
        return SplicingTask(config, seed=0)

    with pytest.raises(ConfigError, match=r"^data.classes lists donor more than once$"):
        with_classes(["none", "donor", "donor", "acceptor"])
    with pytest.raises(ConfigError, match=r"^data.classes must start with 'none' \(got donor"):
        with_classes(["donor", "none", "acceptor"])
    assert with_classes(["none", "donor", "acceptor"]).classes == ["none", "donor", "acceptor"]


def test_sparling_and_baseline_share_the_network(tiny_dataset):
    task = _task(tiny_dataset)
    sparse, plain = task.build_model(sparse=True), task.build_model(sparse=False)
    assert sparse.sparse is not None and plain.sparse is None
    assert sparse.g.receptive_field <= 31
    names = {k for k in sparse.state_dict() if not k.startswith(("sparse.", "core"))}
    assert names == set(plain.state_dict())
    assert plain.core is None  # the baseline never has a supplied core
    out = plain(task.train_batch(0, 2).x)
    assert out["logits"].shape == (2, 3, 1000)


def test_default_model_is_the_issue_architecture(tiny_dataset):
    config = resolve_config("splicing", "cpu", overrides=[{"data": {"dataset": str(tiny_dataset)}}])
    model = SplicingTask(config, 0).build_model()
    assert model.g.receptive_field == 31 and model.g.motifs == 32
    assert model.h.receptive_field == 401  # SpliceAI-400


def test_long_preset_reads_2000_nt_on_a_dataset_of_that_context(tmp_path):
    from sparling_genomics.genome.dataset import DatasetSpec, build_dataset
    from tests.conftest import TINY_FASTA, TINY_GFF

    path = tmp_path / "wide.h5"
    build_dataset(path, TINY_FASTA, annotation=TINY_GFF, spec=DatasetSpec(context=2000))
    config = resolve_config("splicing", "long", overrides=[{"data": {"dataset": str(path)}}])
    assert config.train.max_seconds == 3 * resolve_config("splicing", "cpu").train.max_seconds
    task = SplicingTask(config, 0)
    model = task.build_model().eval()
    assert model.h.receptive_field == 2001 and model.g.receptive_field == 31
    batch = next(task.eval_batches("test", 2))
    with torch.no_grad():
        logits = model(batch.x)["logits"]
    assert batch.x.shape[-1] == 3000 and logits.shape[-1] == 1000


def test_share_range_gives_the_learned_channels_a_shared_budget(tiny_dataset):
    assert _task(tiny_dataset).build_model().sparse.share_range == (0.25, 8.0)  # the default
    per_channel = _task(tiny_dataset, sparse={"share_range": [1, 1]}).build_model()
    assert per_channel.sparse.share_range is None
    model = _task(tiny_dataset, sparse={"share_range": [0.25, 8]}).build_model()
    assert model.sparse.share_range == (0.25, 8.0) and model.sparse.compete_window == 2
    with pytest.raises(ConfigError, match="share_range must have 0 <= LOW <= 1 <= HIGH"):
        _task(tiny_dataset, sparse={"share_range": [2, 8]}).build_model()


def test_motif_blocks_keep_the_core_channels_single(tiny_dataset):
    model = _task(tiny_dataset, sparse={"block_size": 2}).build_model()
    assert model.g.motifs == 16 and model.learned == 8 and model.channels == 10
    assert all(layer.block_size == 1 for layer in model.core_sparse)
    assert model.motif_groups()[-2:] == [[16], [17]] and model.motif_groups()[0] == [0, 1]
    out = model(_task(tiny_dataset).train_batch(0, 2).x)
    assert out["layer"].shape[1] == 18 and out["motifs"].shape[1] == 8
    assert out["core_motifs"].shape[1] == 2


def test_missing_dataset_is_a_config_error():
    config = resolve_config("splicing", "tiny")
    with pytest.raises(ConfigError, match="data.dataset is empty"):
        SplicingTask(config, 0)


def _train_tiny(cli, dataset, run, *extra):
    result = cli("train", "--task", "splicing", "--preset", "tiny", "--dataset", dataset,
                 "--out", run, "--no-progress", *extra)  # fmt: skip
    assert result.returncode == 0, result.stderr


def test_tiny_end_to_end_train_and_evaluate(cli, tiny_dataset, tmp_path):
    run = tmp_path / "run"
    _train_tiny(cli, tiny_dataset, run)
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["task"] == "splicing"
    for name in ("acceptor", "donor"):
        site = metrics["sites"][name]
        assert site["sites"] > 0 and 0.0 <= site["topk"] <= 1.0 and 0 < site["pr_auc"] <= 1
    assert metrics["e2e"]["mean_topk"] == pytest.approx(
        (metrics["sites"]["acceptor"]["topk"] + metrics["sites"]["donor"]["topk"]) / 2
    )
    log = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()]
    main = [r for r in log if r["phase"] != "core"]  # the core phase logs core_val_*
    assert main and all("val_mean_topk" in r and "val_donor_pr_auc" in r for r in main)
    evaluated = cli("evaluate", "--model", run, "--out", tmp_path / "m.json")
    assert evaluated.returncode == 0, evaluated.stderr
    again = json.loads((tmp_path / "m.json").read_text())
    assert again["e2e"] == pytest.approx(metrics["e2e"])


def test_evaluate_on_a_dataset_of_another_class_order_matches_classes_by_name(
    cli, tiny_dataset, tmp_path
):
    """The same genome built with ``--labels donor,acceptor``: the run scores exactly as on
    its own dataset (the class order was a silent top-k 0.0 before), and its config records
    the classes it was trained with."""
    import yaml

    from sparling_genomics.genome.dataset import DatasetSpec, build_dataset

    from ..conftest import TINY_FASTA, TINY_GFF

    run = tmp_path / "run"
    _train_tiny(cli, tiny_dataset, run, "--baseline")
    saved = yaml.safe_load((run / "config.yaml").read_text())
    assert saved["data"]["classes"] == ["none", "acceptor", "donor"]
    other = tmp_path / "donor_first.h5"
    build_dataset(other, TINY_FASTA, annotation=TINY_GFF,
                  spec=DatasetSpec(kinds=["donor", "acceptor"]))  # fmt: skip
    own = cli("evaluate", "--model", run, "--out", tmp_path / "own.json")
    swapped = cli("evaluate", "--model", run, "--dataset", other, "--out", tmp_path / "o.json")
    assert own.returncode == 0 and swapped.returncode == 0, swapped.stderr
    a, b = (json.loads((tmp_path / n).read_text()) for n in ("own.json", "o.json"))
    for name in ("acceptor", "donor"):  # PR-AUC tells the classes apart even at top-k 0
        assert b["sites"][name] == pytest.approx(a["sites"][name])
    assert a["sites"]["acceptor"]["pr_auc"] != pytest.approx(a["sites"]["donor"]["pr_auc"])
    assert b["e2e"] == pytest.approx(a["e2e"])
    donor_only = tmp_path / "donor.h5"
    build_dataset(donor_only, TINY_FASTA, annotation=TINY_GFF, spec=DatasetSpec(kinds=["donor"]))
    failed = cli("evaluate", "--model", run, "--dataset", donor_only)
    assert failed.returncode == 2
    assert failed.stderr.strip().splitlines() == [
        f"error: {donor_only}: its site classes (donor) are not the model's (acceptor, donor); "
        "rebuild the dataset with --labels acceptor,donor"
    ]


def test_baseline_trains_without_annealing(cli, tiny_dataset, tmp_path):
    run = tmp_path / "base"
    _train_tiny(cli, tiny_dataset, run, "--baseline")
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["density"] is None and metrics["annealing"]["enabled"] is False
    assert metrics["stopped_by"] == "max_samples"
    assert all(r["phase"] == "final" for r in map(json.loads, (run / "train_log.jsonl").open()))


def test_evaluate_without_checkpoint_is_one_line_error(cli, tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "config.yaml").write_text("task: splicing\n")
    result = cli("evaluate", "--model", tmp_path / "run")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'run'}: has no checkpoints/final.pt (training not finished?)"
    ]


def _bed_dataset(path, names):
    """A BED-labelled dataset on the tiny reference: single-base sites of ``names``."""
    from sparling_genomics.genome.dataset import build_dataset

    from ..conftest import TINY_FASTA

    seqid = TINY_FASTA.read_text().split()[0][1:]
    rows = [f"{seqid}\t{p}\t{p + 1}\t{names[i % len(names)]}\t0\t+"
            for i, p in enumerate(range(1_000, 290_000, 997))]  # fmt: skip
    bed = path.with_suffix(".bed")
    bed.write_text("\n".join(rows) + "\n")
    build_dataset(path, TINY_FASTA, bed=bed)
    return path


def test_core_channels_are_present_and_frozen_during_the_main_training(tiny_dataset, tmp_path):
    from sparling_genomics.config import dump_yaml
    from sparling_genomics.rundir import create_run_directory
    from sparling_genomics.train.checkpoint import load_checkpoint
    from sparling_genomics.train.trainer import Trainer

    overrides = [{"data": {"dataset": str(tiny_dataset)}}]
    config = resolve_config("splicing", "tiny", overrides=overrides)
    run = tmp_path / "run"
    trainer = Trainer(config, run, progress=False)
    create_run_directory(run, dump_yaml(config))
    model = trainer.model
    assert model.core.classes == ["acceptor", "donor"] and model.channels == 8 + 2
    assert model.h.inp.weight.shape[1] == 10  # h reads the learned and the core channels
    assert [round(layer.density, 6) for layer in model.core_sparse] == [
        round(f, 6) for f in trainer.task.site_frequencies()
    ]
    before = {k: v.clone() for k, v in model.core.state_dict().items()}
    train_core(trainer)
    trained = {k: v.clone() for k, v in model.core.state_dict().items()}
    assert any(not torch.equal(before[k], trained[k]) for k in before if k != "trained")
    assert model.core.frozen and not any(p.requires_grad for p in model.core.parameters())
    assert all(id(p) not in {id(q) for q in model.core.parameters()}
               for group in trainer.optimizer.param_groups for p in group["params"])  # fmt: skip
    trainer.run()
    final = load_checkpoint(run / "checkpoints" / "final.pt")["model"]
    for key, value in trained.items():
        assert torch.equal(final[f"core.{key}"], value), key
    log = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()]
    core = [r for r in log if r["phase"] == "core"]
    assert core and log[: len(core)] == core and "core_val_mean_topk" in core[-1]
    assert core[-1]["core_samples"] == config.train.core_samples
    assert all("samples" in r for r in log[len(core) :])
    # The core channels fire in the main model, at about their own density.
    out = model.eval()(trainer.task.train_batch(0, 4).x)
    assert out["core_motifs"].shape == (4, 2, 1400) and out["motifs"].shape == (4, 8, 1400)


def test_core_sites_false_is_the_model_without_a_core(tiny_dataset):
    torch.manual_seed(0)
    plain = _task(tiny_dataset, core_sites=False).build_model()
    torch.manual_seed(0)
    with_core = _task(tiny_dataset).build_model()
    assert plain.core is None and plain.channels == 8
    assert plain.h.inp.weight.shape[1] == 8
    names = {k for k in with_core.state_dict() if not k.startswith("core")}
    assert set(plain.state_dict()) == names
    # g and the sparse layer are built first, from the same seed: the same weights.
    for key, value in plain.g.state_dict().items():
        assert torch.equal(value, with_core.g.state_dict()[key]), key
    out = plain(_task(tiny_dataset).train_batch(0, 2).x)
    assert set(out) == {"logits", "motifs", "layer"}


def test_a_bed_task_gets_one_core_per_class(tmp_path):
    dataset = _bed_dataset(tmp_path / "bed.h5", ["siteA", "siteB", "siteC"])
    task = _task(dataset)
    model = task.build_model()
    assert model.core.classes == ["siteA", "siteB", "siteC"]
    assert model.core.windows == [(10, 10)] * 3  # core_flank each side: no known window
    assert len(model.core_sparse) == 3 and model.h.inp.weight.shape[1] == 8 + 3
    task = _task(dataset, core_windows=["siteB:4:12"])
    assert task.build_model().core.windows == [(10, 10), (4, 12), (10, 10)]


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("model.core_windows=[tss:5:5]", "names class 'tss', which"),
        ("model.core_windows=[donor-5-5]", "must be CLASS:UPSTREAM:DOWNSTREAM"),
    ],
)
def test_core_windows_that_do_not_fit_the_dataset_are_one_line_errors(
    cli, tiny_dataset, tmp_path, setting, message
):
    run = tmp_path / "run"
    result = cli("train", "--task", "splicing", "--preset", "tiny", "--dataset", tiny_dataset,
                 "--out", run, "--no-progress", "--set", setting)  # fmt: skip
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0]
    assert not run.exists()


def test_a_run_saved_before_the_core_loads_as_it_was_trained():
    from sparling_genomics.train.run_config import load_saved_config

    from ..conftest import REPO

    saved = REPO / "bench_runs" / "splicing_before_core" / "sparling"
    config = load_saved_config(saved / "config.yaml")
    assert config.model.core_sites is False and config.model.sparse.compete_window == 0
