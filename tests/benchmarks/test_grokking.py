from benchmarks.grokking import _markdown, modular_row, planted_row, tag


def _diag(jump):
    series = [
        {"step": s, "density": d, "raw_points": 900 - s, "points": 300, "h0_total": 10 - s / 100,
         "h1_max": 0.08 + (0.1 if jump and s >= jump else 0), "h1_total": 2.0,
         "twonn_local": 40 - s / 100, "fourier_top5_share": 0.1 + s / 1000,
         "fourier_top5": [1, 2, 3, 4, 5],
         "accuracy": {"train": 1.0, "test": 1.0 if jump and s >= jump else 0.01}}
        for s, d in ((0, 0.5), (100, 0.1), (200, 0.01), (300, 0.002))
    ]  # fmt: skip
    events = {"train_fit_step": 100, "test_jump_step": jump, "h1_rise_step": jump,
              "h1_max_before_jump": 0.08, "h1_max_after_jump": 0.18 if jump else None}  # fmt: skip
    return {"events": events, "series": series, "checkpoints": 4,
            "spearman": {"h1_max": {"rho": 0.8, "p": 0.01, "n": 4}}}  # fmt: skip


METRICS = {"e2e": {"exact_match": 0.99}, "wall_seconds": 600, "samples_seen": 512 * 300,
           "density": 0.002}  # fmt: skip


def test_tags_name_the_runs_by_fraction():
    assert [tag(f) for f in (0.0, 0.1, 0.2, 0.05)] == ["0", "01", "02", "005"]


def test_rows_and_markdown_carry_the_measured_figures():
    row = modular_row(0.0, METRICS, _diag(200))
    assert (row["test_jump_step"], row["steps"], row["minutes"]) == (200, 300, 10)
    assert row["twonn_local_before_jump"] == 39.5  # mean of steps 0 and 100
    failed = modular_row(0.2, METRICS, _diag(None))
    planted = planted_row(0, METRICS, _diag(None))
    assert planted["at"]["start"]["density"] == 0.5 and planted["at"]["end"]["density"] == 0.002
    assert planted["spearman_with_density"]["h0_total"] == 1.0  # falls as the density falls
    result = {"machine": {"cpu": "x", "cores": 2, "torch_threads": 1, "memory_gb": 1,
                          "python": "3.11", "torch": "2", "cuda": None, "date": "d"},
              "modular_addition": [row, failed], "planted": [planted],
              "max_points": 600}  # fmt: skip
    text = _markdown(result, "OUT", [0.0, 0.2], [0])
    assert "| 0.00% | 99.00% | 10.0 | 300 | 100 | 200 | 200 | 0.080 | 0.180 | 2.25x |" in text
    assert "| 20.00% | 99.00% | 10.0 | 300 | 100 | None | None | 0.080 | - | - |" in text
    assert "| h1_max | +0.80 (+0.77) | +0.80 (+0.08) |" in text  # the seed's Table 1 beside
