import numpy as np
import pytest
import torch

from sparling_genomics.errors import ConfigError
from sparling_genomics.models.heads import CTCSequenceHead1D
from sparling_genomics.sparsity.annealing import AnnealingSettings
from sparling_genomics.tasks.registry import task_class
from sparling_genomics.train import channel_resample
from sparling_genomics.train.channel_resample import (
    WastedResample,
    missed_directions,
    motif_pwms_and_sites,
    pick_wasted,
)
from sparling_genomics.train.run_config import resolve_config
from sparling_genomics.train.trainer import Trainer, train

from .test_trainer import read_log, resumes_exactly


def test_pick_wasted_takes_copies_beyond_the_kept_one_then_never_needed_motifs():
    alpha = [0.5, 0.4, 0.45, 0.0, 0.5, 0.05]
    nsites = [10, 10, 10, 0, 30, 5]
    # 0, 2 and 4 copy each other: 4 stays (alpha 0.5 as 0, more sites); 3 and 5 are idle
    picked = pick_wasted(alpha, [[0, 2, 4]], nsites, budget=10)
    assert picked == [(3, None, "never needed"), (5, None, "never needed"),
                      (2, 4, "copy of 4"), (0, 4, "copy of 4")]  # least needed first
    assert pick_wasted(alpha, [[0, 2, 4]], nsites, budget=2) == picked[:2]
    assert pick_wasted([0.3, 0.3, 0.3], [], [1, 1, 1], budget=5) == []  # nothing wasted
    assert pick_wasted([0.0, 0.3, 0.3, 0.3], [[0, 1]], [0, 1, 1, 1], 5) == [(0, 1, "copy of 1")]
    assert pick_wasted(alpha, [[0, 2, 4]], nsites, 10, spare={3, 2}) == [
        (5, None, "never needed"), (0, 4, "copy of 4")]  # re-initialised lately: spared


def test_the_rule_is_off_unless_set_and_looks_every_w_samples_within_its_window():
    assert not WastedResample.from_settings(AnnealingSettings()).due(10**6, 1e-3, 1e-3, 0, 8)
    rule = WastedResample.from_settings(AnnealingSettings(resample_samples=100))
    assert (rule.within, rule.until, rule.limit_for(8)) == (8.0, 0.5, 4)
    assert not rule.due(500, 0.0081, 0.001, 0, 8)  # above 8 x the stop density
    assert rule.due(500, 0.008, 0.001, 0, 8)
    assert rule.due(500, 0.001, 0.001, 0.49, 8) and not rule.due(500, 0.001, 0.001, 0.5, 8)
    rule.since = 500
    assert not rule.due(599, 0.002, 0.001, 0, 8) and rule.due(600, 0.002, 0.001, 0, 8)
    rule.done = 4
    assert not rule.due(10**6, 0.002, 0.001, 0, 8)  # half of 8 learned motifs spent
    assert not rule.due(10**6, None, 0.001, 0, 8)  # no sparse layer
    limited = WastedResample.from_settings(AnnealingSettings(resample_samples=1, resample_limit=1))
    assert limited.limit_for(32) == 1


def _planted():
    config = resolve_config("planted", "tiny", overrides=[{"data": {"background": "iid"}}])
    torch.manual_seed(0)
    task = task_class("planted")(config, 0)
    return task, task.build_model()


def test_motif_pwms_and_sites_read_each_site_window_on_its_strand():
    task, model = _planted()
    model.set_density(0.05)
    pwms, sites = motif_pwms_and_sites(model, task, "val", samples=8, batch_size=4,
                                       device=torch.device("cpu"))  # fmt: skip
    model.eval()
    batches = list(task.eval_batches("val", 4))
    x = torch.cat([b.x for b in batches])[:8]
    with torch.no_grad():
        motifs = model.motifs(x)[:, : model.learned]
        strand = model.g.strand_of_max(x)
    rf = model.g.receptive_field
    padded = np.pad(x.numpy(), ((0, 0), (0, 0), (rf // 2, rf // 2)))
    for c in range(model.learned):
        n, p = np.nonzero(motifs[:, c].numpy() > 0)
        assert sorted(zip(*sites[c])) == sorted(zip(n.tolist(), p.tolist()))
        if len(n) < channel_resample.MIN_SITES:
            assert c not in pwms
            continue
        windows = [padded[i, :, q : q + rf] for i, q in zip(n, p)]
        windows = [w[::-1, ::-1] if strand[i, c, q] else w for w, i, q in zip(windows, n, p)]
        probs = np.sum(windows, axis=0).T + channel_resample.PSEUDOCOUNT
        probs /= probs.sum(axis=1, keepdims=True)
        assert pwms[c].shape[1] == 4 and len(pwms[c]) <= rf
        assert any(np.allclose(pwms[c], probs[lo : lo + len(pwms[c])])
                   for lo in range(rf - len(pwms[c]) + 1))  # fmt: skip


def test_a_constructed_duplicate_is_found_and_the_copy_picked():
    """A motif made an exact copy of the busiest one (models/split.py without noise): the
    copy criterion groups the two and one of them, never a third motif, is re-initialised."""
    from sparling_genomics.evaluate.copies import near_copies
    from sparling_genomics.evaluate.identifiability import channel_necessity
    from sparling_genomics.models.split import apply_split

    from ..models.test_split import trained_a_little

    task, model = _planted()
    trained_a_little(task, model, steps=20)  # thresholds and statistics of a density of 0.05
    cpu = torch.device("cpu")

    def look():
        return motif_pwms_and_sites(model, task, "val", samples=64, batch_size=16, device=cpu)

    _, sites = look()
    counts = [len(sites[m][0]) for m in range(model.learned)]
    source = int(np.argmax(counts))
    target = (source + 1) % model.learned
    assert counts[source] > 0
    apply_split(model, source, target, noise=0.0)
    pwms, sites = look()
    assert sorted(zip(*sites[source])) == sorted(zip(*sites[target]))
    groups = near_copies(pwms, {m: sites[m] for m in pwms})["groups"]
    pair = next(g for g in groups if source in g)
    assert target in pair
    alpha = channel_necessity(model, task, "val", batch_size=16, device=cpu,
                              samples=64)["alpha"][: model.learned]  # fmt: skip
    nsites = [len(sites[m][0]) for m in range(model.learned)]
    picked = pick_wasted(alpha, groups, nsites, budget=model.learned)
    copies = [(m, merge) for m, merge, why in picked if why.startswith("copy")]
    assert copies and all({m, merge} <= set(pair) for m, merge in copies)
    assert len([m for m, _ in copies if m in (source, target)]) == 1  # one of the two stays


def _tiny(**annealing):
    return resolve_config("planted", "tiny", overrides=[
        {"data": {"background": "iid"},
         "annealing": {"resample_within": 1000, "split_samples": 0, **annealing}},
        {"train": {"max_samples": 2400, "final_samples": 800}},
    ])  # fmt: skip


def _scripted(monkeypatch, idle=2, copies=((0, 1),), first_only=True):
    """At the first look (every look without ``first_only``) motif ``idle`` is never needed,
    otherwise every motif is needed alike but motif 1 a little less; ``copies`` share one
    PWM. Each look is recorded."""
    looks = []

    def necessity(model, task, split, **kwargs):
        looks.append(split)
        alpha = [0.25 if c == 1 else 0.3 for c in range(model.learned)]
        if len(looks) == 1 or not first_only:
            alpha[idle] = 0.0
        return {"channels": [str(c) for c in range(model.learned)], "alpha": alpha}

    def pwms_and_sites(model, task, split, **kwargs):
        rng = np.random.default_rng(0)
        pwms = {c: rng.dirichlet(np.ones(4), size=8) for c in range(model.learned)}
        for a, b in copies:
            pwms[b] = pwms[a]
        empty = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        return pwms, {c: empty for c in range(model.learned)}

    monkeypatch.setattr(channel_resample, "channel_necessity", necessity)
    monkeypatch.setattr(channel_resample, "motif_pwms_and_sites", pwms_and_sites)
    return looks


def test_a_run_reinitialises_its_copy_and_its_never_needed_motif(tmp_path, monkeypatch):
    looks = _scripted(monkeypatch)
    edits = []
    reinit = channel_resample.reinit_motif

    def watched(model, motif, **kwargs):
        edits.append((motif, kwargs.get("merge")))
        reinit(model, motif, **kwargs)

    monkeypatch.setattr(channel_resample, "reinit_motif", watched)
    config = _tiny(resample_samples=320, resample_limit=2)
    metrics = train(config, tmp_path / "run", progress=False)
    assert metrics["annealing"]["resample"]["limit"] == 2
    records = [(r["samples"], r["resample"]) for r in read_log(tmp_path / "run") if "resample" in r]
    # one motif a look (a quarter of 4), every 320 samples, then its limit
    assert records == [(160, [{"motif": 2, "why": "never needed", "alpha": 0.0}]),
                       (480, [{"motif": 1, "why": "copy of 0", "alpha": 0.25}])]  # fmt: skip
    assert edits == [(2, None), (1, 0)] and len(looks) == 2
    summary = metrics["annealing"]["resample"]
    assert summary["done"] == 2 and [e[:3] for e in summary["log"]] == [
        [160, 2, "never needed"], [480, 1, "copy of 0"]]


def test_with_copies_left_alone_only_never_needed_motifs_are_reinitialised(tmp_path,
                                                                          monkeypatch):
    _scripted(monkeypatch, first_only=False)

    def no_pwms(*args, **kwargs):
        raise AssertionError("copies are not looked for")

    monkeypatch.setattr(channel_resample, "motif_pwms_and_sites", no_pwms)
    config = _tiny(resample_samples=320, resample_limit=2, resample_copies=False)
    metrics = train(config, tmp_path / "run", progress=False)
    summary = metrics["annealing"]["resample"]
    assert summary["copies"] is False
    # motif 2, idle at every look, is spared for 4 looks' samples (1,280) after each re-init;
    # the copy of motif 0 is never picked
    assert [e[:3] for e in summary["log"]] == [[160, 2, "never needed"],
                                               [1440, 2, "never needed"]]


def test_a_run_without_the_rule_never_looks(tmp_path, monkeypatch):
    looks = _scripted(monkeypatch)
    metrics = train(_tiny(resample_samples=0), tmp_path / "run", progress=False)
    assert looks == [] and "resample" not in metrics["annealing"]


def test_no_look_while_a_step_is_on_probation(tmp_path, monkeypatch):
    looks = _scripted(monkeypatch)
    (tmp_path / "run").mkdir()
    trainer = Trainer(_tiny(resample_samples=320), tmp_path / "run", progress=False)
    trainer.probation.anchor = {"model": {}, "optimizer": {}}
    assert trainer.resampler.review(trainer, 160) == {} and looks == []


def test_a_run_killed_after_a_resample_resumes_exactly(tmp_path, monkeypatch):
    _scripted(monkeypatch, first_only=False)  # the same looks in each of the three runs
    config = _tiny(resample_samples=320, resample_limit=2)
    assert resumes_exactly(config, tmp_path, monkeypatch, kill_at=320, logged="resample")


def test_a_model_that_cannot_be_edited_fails_before_the_run(tmp_path, monkeypatch):
    original = CTCSequenceHead1D.__init__

    def without_inp(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.inp = None

    monkeypatch.setattr(CTCSequenceHead1D, "__init__", without_inp)
    (tmp_path / "run").mkdir()
    with pytest.raises(ConfigError, match="head whose first layer `inp`"):
        Trainer(_tiny(resample_samples=320), tmp_path / "run", progress=False)
    Trainer(_tiny(resample_samples=0), tmp_path / "run", progress=False)  # off: no check


def test_the_two_channel_rules_are_not_combined(tmp_path):
    (tmp_path / "run").mkdir()
    with pytest.raises(ConfigError, match="use one of the two rules"):
        Trainer(_tiny(resample_samples=320, split_samples=320), tmp_path / "run", progress=False)


def test_missed_directions_point_at_positions_the_model_gets_wrong(tiny_dataset):
    """Each direction is g's output-layer features at one validation position, centred; the
    positions are drawn by squared loss, so they are the model's errors (here: a model sure
    that no position is a site misses every site), not the background it gets right."""
    config = resolve_config("splicing", "tiny",
                            overrides=[{"data": {"dataset": str(tiny_dataset)}}])  # fmt: skip
    torch.manual_seed(0)
    task = task_class("splicing")(config, 0)
    model = task.build_model().eval()
    forward = model.forward

    def no_sites(x):
        out = forward(x)
        logits = out["logits"].clone()
        logits[:, 0] += 20.0
        return {**out, "logits": logits}

    model.forward = no_sites
    got = missed_directions(model, task, 4, batch_size=8, device="cpu",
                            generator=torch.Generator().manual_seed(0))  # fmt: skip
    assert got.shape == (4, model.g.out.weight.shape[1])
    captured, labels, features = [], [], []
    hook = model.g.out.register_forward_hook(lambda m, i, o: captured.append(i[0]))
    with torch.no_grad():
        for batch in task.eval_batches("val", 8):
            captured.clear()
            model(batch.x)
            labels.append(batch.y.flatten())
            z = captured[0][: len(batch.x)].flatten(2)
            flank = (batch.x.shape[-1] - batch.y.shape[-1]) // 2  # the context flanks
            assert flank > 0
            z = z[..., flank : flank + batch.y.shape[-1]]
            features.append(z.transpose(1, 2).reshape(-1, z.shape[1]))
    hook.remove()
    y, z = torch.cat(labels), torch.cat(features)
    centred = z - z.mean(dim=0)
    rows = [int((centred - d).abs().sum(dim=1).argmin()) for d in got]
    for d, row in zip(got, rows):
        assert torch.allclose(d, centred[row], atol=1e-4)
    assert bool((y[rows] > 0).all()) and float((y > 0).float().mean()) < 0.01  # sites, rare


def test_the_missed_init_needs_a_task_scored_per_position(tmp_path):
    (tmp_path / "run").mkdir()
    with pytest.raises(ConfigError, match="resample_init=missed: needs a task scored per"):
        Trainer(_tiny(resample_samples=320, resample_init="missed"), tmp_path / "run",
                progress=False)  # fmt: skip


def test_a_look_with_the_missed_init_points_the_fresh_motif_at_an_error(tmp_path, monkeypatch,
                                                                         tiny_dataset):
    """Through the rule's look on the splicing task: the never-needed motif's new filter is
    a drawn position's centred features at the other filters' mean norm."""
    _scripted(monkeypatch, copies=())
    drawn = []

    def watched(model, task, count, **kwargs):
        drawn.append(missed_directions(model, task, count, **kwargs))
        return drawn[-1]

    monkeypatch.setattr(channel_resample, "missed_directions", watched)
    config = resolve_config("splicing", "tiny", overrides=[
        {"data": {"dataset": str(tiny_dataset)}},
        {"annealing": {"resample_samples": 320, "resample_within": 1000,
                       "resample_init": "missed"}}])  # fmt: skip
    (tmp_path / "run").mkdir()
    trainer = Trainer(config, tmp_path / "run", progress=False)
    weight = trainer.model.g.out.weight.detach()
    others = torch.cat([weight[:2], weight[3:]]).flatten(1).norm(dim=1).mean()
    record = trainer.resampler.review(trainer, 160)
    assert record == {"resample": [{"motif": 2, "why": "never needed", "alpha": 0.0}]}
    assert len(drawn) == 1 and drawn[0].shape[0] == 1
    new = weight[2].flatten()
    assert torch.allclose(new.norm(), others)
    assert torch.allclose(new / new.norm(), drawn[0][0] / drawn[0][0].norm(), atol=1e-6)
    assert trainer.resampler.summary()["init"] == "missed"
