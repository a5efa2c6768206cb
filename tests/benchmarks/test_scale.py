"""The scale benchmark (issue 55, item 2) on tiny inputs: the genome generator (sizes, names,
~1% substitutions, GFF offsets and IDs, the cut, determinism), the random SNVs, a child's peak
RSS, resuming after a kill, and the BENCHMARKS.md section from a made-up JSON."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import scale, scale_genome, scale_report, scale_steps
from tests.conftest import REPO, TINY_FASTA, TINY_GFF

SCRIPT = REPO / "scripts" / "make_scale_genome.py"


@pytest.fixture(scope="module")
def gen():
    """``scripts/make_scale_genome.py`` as a module."""
    spec = importlib.util.spec_from_file_location("make_scale_genome", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _tiny_sources(gen, folder: Path) -> dict:
    """Two 300 kb sources from the tiny reference: ``a`` with its GFF3, ``b`` the same bases
    as gene-free sequence (one record named ``b``)."""
    seqid = TINY_FASTA.read_text().split()[0][1:]
    bare = folder / "b.fa"
    bare.write_text(">b gene-free\n" + "".join(TINY_FASTA.read_text().split("\n", 1)[1]))
    return {"a": gen.Source("a", "tiny annotated", TINY_FASTA, seqid, TINY_GFF),
            "b": gen.Source("b", "tiny gene-free", bare, "b", None)}  # fmt: skip


def _bases(fasta: Path) -> dict[str, bytes]:
    """Every record of a plain FASTA as bytes (case kept)."""
    out, name = {}, None
    for line in fasta.read_bytes().splitlines():
        if line.startswith(b">"):
            name = line[1:].split()[0].decode()
            out[name] = bytearray()
        else:
            out[name] += line.strip()
    return {k: bytes(v) for k, v in out.items()}


def _features(gff: Path) -> list[list[str]]:
    return [line.split("\t") for line in gff.read_text().splitlines()
            if line and not line.startswith("#")]  # fmt: skip


def _attrs(cols: list[str]) -> dict[str, str]:
    return dict(p.split("=", 1) for p in cols[8].split(";") if "=" in p)


def _pyfaidx_index(fasta: Path, folder: Path) -> str:
    """The ``.fai`` pyfaidx builds for a copy of ``fasta``."""
    import pyfaidx

    copy = folder / "copy.fa"
    shutil.copy(fasta, copy)
    pyfaidx.Fasta(str(copy)).close()
    return Path(f"{copy}.fai").read_text()


# Tiled from the tiny sources, order (b, a), two copies a sequence 1,000 N apart:
# chr1 = b_copy1 (300,000) + gap + a_copy1 (at 301,000); chr2 = b_copy2 + gap + a_copy2 cut at
# CUT bases (inside a gene of the tiny annotation, chosen below).
LENGTH = 300_000
GAP = 1_000


@pytest.fixture(scope="module")
def tiled(gen, tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiled")
    sources = _tiny_sources(gen, folder)
    genes = [c for c in _features(TINY_GFF) if c[2] == "gene"]
    straddled = next(c for c in genes if int(c[3]) > 150_000)
    cut = int(straddled[3]) + 10  # inside that gene: it must go
    size = 2 * LENGTH + GAP + LENGTH + GAP + cut

    def make(out: Path, seed: int = 0, rate: float = 0.01) -> dict:
        return gen.make_genome(out, size=size, seed=seed, rate=rate, join=2, gap=GAP,
                               all_sources=sources, order=("b", "a"))  # fmt: skip

    summary = make(folder / "g")
    return {"gen": gen, "folder": folder, "make": make, "summary": summary, "cut": cut,
            "straddled": straddled, "size": size, "sources": sources}  # fmt: skip


def test_tiled_genome_sizes_names_and_index(tiled, tmp_path):
    s = tiled["summary"]
    assert s["bases"] == tiled["size"] and s["sequences"] == 2
    assert [p["name"] for p in s["pieces"]] == ["b_copy1", "a_copy1", "b_copy2", "a_copy2"]
    assert [p["offset"] for p in s["pieces"]] == [0, LENGTH + GAP, 0, LENGTH + GAP]
    assert s["annotated_bases"] == LENGTH + tiled["cut"]
    fasta = Path(s["fasta"])
    seqs = _bases(fasta)
    assert {k: len(v) for k, v in seqs.items()} == {"chr1": 2 * LENGTH + GAP,
                                                    "chr2": LENGTH + GAP + tiled["cut"]}
    assert seqs["chr1"][LENGTH : LENGTH + GAP] == b"N" * GAP
    lines = fasta.read_text().splitlines()
    assert {len(line) for line in lines if not line.startswith(">")} <= set(range(1, 61))
    assert Path(s["fai"]).read_text() == _pyfaidx_index(fasta, tmp_path)
    # the summary (written last) and nothing left at a temporary name
    assert json.loads((fasta.parent / "genome.json").read_text())["bases"] == s["bases"]
    assert sorted(p.name for p in fasta.parent.iterdir()) == [
        "genome.fa", "genome.fa.fai", "genome.gff3", "genome.json"]


def test_copies_carry_about_one_percent_substitutions(tiled):
    seqs = _bases(Path(tiled["summary"]["fasta"]))
    source = b"".join(_bases(TINY_FASTA).values())
    copy = seqs["chr1"][LENGTH + GAP :]  # a_copy1, whole
    a, b = np.frombuffer(source, np.uint8), np.frombuffer(copy, np.uint8)
    differ = a != b
    acgt = np.isin(a, np.frombuffer(b"ACGTacgt", np.uint8))
    assert not (differ & ~acgt).any()  # N and other letters never change
    assert 0.008 < differ.sum() / acgt.sum() < 0.012
    assert (np.char.islower(a.view("S1")) == np.char.islower(b.view("S1"))).all()  # case kept
    assert 0.008 < tiled["summary"]["substitution_rate"] < 0.012
    pieces = {p["name"]: p for p in tiled["summary"]["pieces"]}
    assert pieces["a_copy1"]["substitutions"] == differ.sum()
    # each copy has its own substitutions
    assert seqs["chr1"][:LENGTH] != seqs["chr2"][:LENGTH]


def test_gff_moved_renamed_and_unique(tiled):
    gen = tiled["gen"]
    features = _features(Path(tiled["summary"]["gff"]))
    seqs = _bases(Path(tiled["summary"]["fasta"]))
    source = b"".join(_bases(TINY_FASTA).values())
    source_genes = {_attrs(c)["ID"]: c for c in _features(TINY_GFF) if c[2] == "gene"}
    copy1 = [c for c in features if _attrs(c)["ID"].startswith("a_copy1:")]
    assert copy1 and all(c[0] == "chr1" for c in copy1)
    assert len(copy1) == sum(1 for c in _features(TINY_GFF) if c[2] != "region")
    checked = 0
    for cols in copy1:
        if cols[2] != "gene":
            continue
        original = source_genes[_attrs(cols)["ID"].split(":", 1)[1]]
        lo, hi = int(original[3]) - 1, int(original[4])
        assert (int(cols[3]) - 1, int(cols[4])) == (lo + LENGTH + GAP, hi + LENGTH + GAP)
        mine = np.frombuffer(seqs["chr1"][lo + LENGTH + GAP : hi + LENGTH + GAP], np.uint8)
        theirs = np.frombuffer(source[lo:hi], np.uint8)
        assert (mine != theirs).mean() < 0.05  # the same gene, up to its substitutions
        checked += 1
    assert checked > 20
    ids: dict[str, set] = {}
    for cols in features:
        attrs = _attrs(cols)
        ids.setdefault(attrs["ID"].split(":")[0], set()).add(attrs["ID"])
        for parent in attrs.get("Parent", "").split(",") if "Parent" in attrs else []:
            assert parent.split(":")[0] == attrs["ID"].split(":")[0]
    assert set(ids) == {"a_copy1", "a_copy2"}
    assert not ids["a_copy1"] & ids["a_copy2"]
    # the project's own reader takes the file: the first copy's transcripts all come through
    from sparling_genomics.genome.annotation import read_annotation

    lengths = {k: len(v) for k, v in seqs.items()}
    ours = read_annotation(Path(tiled["summary"]["gff"]), lengths).selected()
    theirs = read_annotation(TINY_GFF, {next(iter(_bases(TINY_FASTA))): LENGTH}).selected()
    assert sum(t.seqid == "chr1" for t in ours) == len(theirs)
    assert gen.rewrite_attributes("ID=x;Parent=p,q;Name=n", "c") == "ID=c:x;Parent=c:p,c:q;Name=n"


def test_the_cut_keeps_whole_genes_only(tiled):
    cut, straddled = tiled["cut"], tiled["straddled"]
    offset = LENGTH + GAP
    copy2 = [c for c in _features(Path(tiled["summary"]["gff"])) if c[0] == "chr2"]
    assert copy2 and max(int(c[4]) for c in copy2) <= offset + cut
    kept = {_attrs(c)["ID"].split(":", 1)[1] for c in copy2}
    assert _attrs(straddled)["ID"] not in kept
    expected = {_attrs(c)["ID"] for c in _features(TINY_GFF)
                if c[2] == "gene" and int(c[4]) <= cut}  # fmt: skip
    assert {i for i in kept if i.startswith("gene-")} == expected
    # nothing under the dropped gene is left (its transcripts, exons, CDS)
    children = {_attrs(c)["ID"] for c in _features(TINY_GFF)
                if _attrs(c).get("Parent") == _attrs(straddled)["ID"]}  # fmt: skip
    assert children and not children & kept


def test_same_seed_same_bytes_another_seed_other_bases(tiled):
    again = tiled["make"](tiled["folder"] / "again")
    first = tiled["summary"]
    for key in ("fasta", "gff", "fai"):
        assert Path(again[key]).read_bytes() == Path(first[key]).read_bytes()
    other = tiled["make"](tiled["folder"] / "seed1", seed=1)
    assert Path(other["fasta"]).read_bytes() != Path(first["fasta"]).read_bytes()
    exact = tiled["make"](tiled["folder"] / "exact", rate=0.0)
    seqs = _bases(Path(exact["fasta"]))
    assert seqs["chr1"][LENGTH + GAP :] == b"".join(_bases(TINY_FASTA).values())
    assert exact["substitutions"] == 0


def test_a_smaller_genome_is_a_prefix(gen, tiled, tmp_path):
    small = gen.make_genome(tmp_path / "s", size=350_000, join=1, all_sources=tiled["sources"],
                            order=("b", "a"))  # fmt: skip
    big = gen.make_genome(tmp_path / "b", size=700_000, join=1, all_sources=tiled["sources"],
                          order=("b", "a"))  # fmt: skip
    s, b = _bases(Path(small["fasta"])), _bases(Path(big["fasta"]))
    assert list(s) == ["b_copy1", "a_copy1"] and list(b) == ["b_copy1", "a_copy1", "b_copy2"]
    assert s["b_copy1"] == b["b_copy1"] and b["a_copy1"].startswith(s["a_copy1"])
    assert len(s["a_copy1"]) == 50_000 and small["bases"] == 350_000


def test_real_prefix_of_the_bundled_chromosomes(gen, tmp_path):
    """2 Mb from the bundled assemblies: a cut copy of TAIR10 chr1, its genes inside."""
    summary = gen.make_genome(tmp_path / "g", size=gen.parse_size("2M"))
    assert summary["bases"] == 2_000_000 and summary["sequences"] == 1
    assert summary["pieces"][0]["name"] == "tair1_copy1"
    assert 600 < summary["genes"] < 800  # TAIR10 chr1's first 2 Mb hold ~730 genes
    assert 0.008 < summary["substitution_rate"] < 0.012
    ends = [int(c[4]) for c in _features(Path(summary["gff"]))]
    assert max(ends) <= 2_000_000
    assert Path(summary["fai"]).read_text() == _pyfaidx_index(Path(summary["fasta"]), tmp_path)


def test_plan_alternates_sources_and_keeps_the_annotated_share(gen):
    lengths = {"tair1": 30_427_671, "arenosa1": 25_224_288, "arenosa2": 14_316_399,
               "arenosaUiO1": 22_929_204, "arenosaUiO2": 16_671_820, "lyrata1": 29_873_447,
               "lyrata2": 21_510_570}  # fmt: skip
    sources = {k: gen.Source(k, k, Path(k), k, Path(k) if k in gen.COMPOSITE else None)
               for k in lengths}  # fmt: skip
    for label in ("100M", "300M", "1G"):
        plan = gen.plan_tiled(gen.parse_size(label), lengths, sources)
        pieces = [p for c in plan for p in c.pieces]
        assert sum(c.length for c in plan) == gen.parse_size(label)
        annotated = sum(p.length for p in pieces if p.source.gff) / gen.parse_size(label)
        assert 0.40 < annotated < 0.50, (label, annotated)
        assert len({c.name for c in plan}) == len(plan)
    assert [c.name for c in gen.plan_tiled(gen.parse_size("100M"), lengths, sources)] == [
        "tair1_copy1", "lyrata1_copy1", "arenosa2_copy1", "arenosaUiO1_copy1", "arenosa1_copy1"]
    assert [gen.size_label(gen.parse_size(t)) for t in ("100M", "1G", "2.5M", "1500")] == [
        "100M", "1G", "2500K", "1500"]
    assert scale_genome.parse_size("1G") == gen.parse_size("1G") == 10**9
    with pytest.raises(ValueError):
        gen.parse_size("big")


def test_composite_keeps_names_and_writes_a_pipeline_config(gen, tmp_path, monkeypatch):
    sources = _tiny_sources(gen, tmp_path)
    monkeypatch.setattr(gen, "COMPOSITE", ("a", "b"))
    summary = gen.make_genome(tmp_path / "c", composite=True, all_sources=sources)
    seqs = _bases(Path(summary["fasta"]))
    assert list(seqs) == [sources["a"].seqid, "b"] and summary["substitutions"] == 0
    assert seqs["b"] == b"".join(_bases(TINY_FASTA).values())
    ids = {_attrs(c)["ID"] for c in _features(Path(summary["gff"]))}
    assert ids == {_attrs(c)["ID"] for c in _features(TINY_GFF) if c[2] != "region"}
    config = Path(summary["pipeline_config"]).read_text()
    assert f"fasta: {Path(summary['fasta']).resolve()}" in config


def test_random_snvs_sorted_on_the_genome_and_reproducible(tiled, tmp_path):
    from sparling_genomics.genome.fasta import Genome

    fasta = Path(tiled["summary"]["fasta"])
    made = scale_genome.write_random_snvs(fasta, tmp_path / "a.vcf", 2_000, seed=3)
    scale_genome.write_random_snvs(fasta, tmp_path / "b.vcf", 2_000, seed=3)
    text = (tmp_path / "a.vcf").read_text()
    assert text == (tmp_path / "b.vcf").read_text() and made["variants"] == 2_000
    assert "##contig=<ID=chr1,length=601000>" in text and "##contig=<ID=chr2," in text
    rows = [line.split("\t") for line in text.splitlines() if not line.startswith("#")]
    order = {"chr1": 0, "chr2": 1}
    keys = [(order[r[0]], int(r[1])) for r in rows]
    assert keys == sorted(keys) and len(set(keys)) == len(keys) == 2_000
    genome = Genome(fasta)
    for chrom, pos, _, ref, alt, *_ in rows[::50]:
        assert "ACGT"[genome.fetch(chrom, int(pos) - 1, int(pos))[0]] == ref != alt
    assert all(r[3] in "ACGT" and r[4] in "ACGT" for r in rows)


def test_inputs_are_reused_when_made_with_the_same_settings(tiled, tmp_path):
    paths = scale_steps.SizePaths(tmp_path / "size")
    shutil.copytree(Path(tiled["summary"]["fasta"]).parent, paths.genome_dir)
    settings = {"seed": 0, "substitution_rate": 0.01, "variants": 300}
    runner = FakeRunner()
    made = scale_genome.prepare_inputs(paths, tiled["size"], settings, runner=runner)
    assert runner.calls == [] and made["vcf"]["variants"] == 300  # the genome was reused
    assert made["genome"]["bases"] == tiled["size"]
    assert "vcf" not in scale_genome.prepare_inputs(paths, tiled["size"], settings, runner=runner)
    again = scale_genome.prepare_inputs(paths, tiled["size"], {**settings, "variants": 200},
                                 runner=runner)  # fmt: skip
    assert again["vcf"]["variants"] == 200 and runner.calls == []
    with pytest.raises(RuntimeError, match="genome failed"):  # another seed: made again
        scale_genome.prepare_inputs(paths, tiled["size"], {**settings, "seed": 1},
                             runner=FakeRunner(fail_at="generate"))  # fmt: skip
    paths.fasta.unlink()  # a clone keeps the summary, not the genome: made again
    with pytest.raises(RuntimeError, match="genome failed"):
        scale_genome.prepare_inputs(paths, tiled["size"], settings,
                                    runner=FakeRunner(fail_at="generate"))


def test_peak_rss_is_each_childs_own(tmp_path):
    """A child that holds 250 MB is measured at >= 0.2 GB; a small child after it is not
    given its peak (what RUSAGE_CHILDREN's maxrss would do)."""
    big = [sys.executable, "-c", "import numpy as np; a = np.ones(250_000_000 // 8); "
           "print(a.sum())"]  # fmt: skip
    measured = scale_steps.measure_command(big, tmp_path / "big.log")
    assert measured["exit_code"] == 0 and measured["peak_rss_gb"] >= 0.2
    small = scale_steps.measure_command([sys.executable, "-c", "pass"], tmp_path / "small.log")
    assert small["peak_rss_gb"] < 0.1 and small["seconds"] > 0
    failed = scale_steps.measure_command([sys.executable, "-c", "import sys; print('boom');"
                                    "sys.exit(3)"], tmp_path / "f.log")  # fmt: skip
    assert failed["exit_code"] == 3 and "boom" in (tmp_path / "f.log").read_text()


class FakeRunner:
    """Stands in for the step runner: records each verb, fails or 'is killed' on request."""

    def __init__(self, kill_at: str | None = None, fail_at: str | None = None) -> None:
        self.calls: list[str] = []
        self.kill_at, self.fail_at = kill_at, fail_at

    def __call__(self, command: list[str], log: Path) -> dict:
        verb = command[3] if command[1:3] == ["-m", "sparling_genomics.cli"] else "generate"
        if verb == self.kill_at:
            raise KeyboardInterrupt  # the benchmark killed mid-step
        self.calls.append(verb)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"{verb} log\n")
        seconds = {"dataset": 10.0, "train": 60.0, "scan": 100.0}.get(verb, 5.0)
        return {"seconds": seconds, "peak_rss_gb": 1.0, "cpu_seconds": seconds,
                "exit_code": 1 if verb == self.fail_at else 0}  # fmt: skip


def _fake_prepare(paths, bases, settings, runner):
    return {"genome": {"bases": bases, "sequences": 3, "annotated_bases": bases // 2,
                       "genes": 100}}  # fmt: skip


def test_a_killed_run_resumes_where_it_stopped(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    out = tmp_path / "scale"
    args = {"benchmarks_md": md, "prepare": _fake_prepare, "log": lambda _: None}
    runner = FakeRunner(kill_at="export")
    with pytest.raises(KeyboardInterrupt):
        scale.run_scale_benchmark(out, ["1M", "2M"], runner=runner, **args)
    assert runner.calls == ["dataset", "train"]
    saved = json.loads((out / "bench_scale.json").read_text())
    assert list(saved["sizes"]["1M"]["steps"]) == ["dataset", "train"]
    assert "1M" in md.read_text() and "lacks export, scan, variants, report" in md.read_text()

    runner = FakeRunner()
    scale.run_scale_benchmark(out, ["1M", "2M"], runner=runner, **args)
    assert runner.calls == ["export", "scan", "variants", "report", *scale_steps.STEPS]
    saved = json.loads((out / "bench_scale.json").read_text())
    assert all(list(v["steps"]) == list(scale_steps.STEPS) for v in saved["sizes"].values())

    runner = FakeRunner()  # everything measured: nothing runs
    scale.run_scale_benchmark(out, ["2M", "1M"], runner=runner, **args)
    assert runner.calls == []
    runner = FakeRunner()  # --no-resume: all again
    scale.run_scale_benchmark(out, ["1M"], runner=runner, resume=False, **args)
    assert runner.calls == list(scale_steps.STEPS)
    with pytest.raises(SystemExit, match="other settings"):
        scale.run_scale_benchmark(out, ["1M"], variants=5, runner=FakeRunner(), **args)


def test_new_inputs_void_the_steps_that_used_the_old(tmp_path):
    args = {"benchmarks_md": tmp_path / "B.md", "log": lambda _: None}

    def remade(what):
        return lambda *a, **k: {**_fake_prepare(*a, **k), what: {"seconds": 1.0}}

    with pytest.raises(KeyboardInterrupt):
        scale.run_scale_benchmark(tmp_path, ["1M"], runner=FakeRunner(kill_at="report"),
                                  prepare=_fake_prepare, **args)  # fmt: skip
    runner = FakeRunner()  # new SNVs: variants again, then the report
    scale.run_scale_benchmark(tmp_path, ["1M"], runner=runner, prepare=remade("vcf"), **args)
    assert runner.calls == ["variants", "report"]
    with pytest.raises(KeyboardInterrupt):
        scale.run_scale_benchmark(tmp_path, ["2M"], runner=FakeRunner(kill_at="scan"),
                                  prepare=_fake_prepare, **args)  # fmt: skip
    runner = FakeRunner()  # a new genome: every step again
    scale.run_scale_benchmark(tmp_path, ["2M"], runner=runner, prepare=remade("generate"),
                              **args)  # fmt: skip
    assert runner.calls == list(scale_steps.STEPS)


def test_a_failed_step_is_recorded_and_retried(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    args = {"benchmarks_md": md, "prepare": _fake_prepare, "log": lambda _: None}
    runner = FakeRunner(fail_at="scan")
    with pytest.raises(SystemExit, match="a step failed"):
        scale.run_scale_benchmark(tmp_path, ["1M"], runner=runner, **args)
    saved = json.loads((tmp_path / "bench_scale.json").read_text())
    assert saved["sizes"]["1M"]["failed"]["step"] == "scan"
    assert "scan log" in saved["sizes"]["1M"]["failed"]["tail"]
    assert "`scan` failed" in md.read_text()
    runner = FakeRunner()
    scale.run_scale_benchmark(tmp_path, ["1M"], runner=runner, **args)
    assert runner.calls == ["scan", "variants", "report"]
    assert "failed" not in json.loads((tmp_path / "bench_scale.json").read_text())["sizes"]["1M"]


def _fabricated(sizes: dict[str, tuple[float, float, float, float]]) -> dict:
    """A result with the given (dataset s, scan s, scan GB, variants GB) per size; other steps
    constant."""
    from benchmarks.report import machine_description

    result = {"benchmark": "scale", "machine": machine_description(),
              "command": "python -m benchmarks scale --out x", "requested": list(sizes),
              "settings": {"seed": 0, "substitution_rate": 0.01, "variants": 100_000,
                           "train": list(scale.TRAIN_SETTINGS)}, "sizes": {}}  # fmt: skip
    for label, (dataset, scan_s, scan_gb, var_gb) in sizes.items():
        bases = scale_genome.parse_size(label)
        steps = {s: {"seconds": 60.0, "peak_rss_gb": 1.0, "bases": bases, "cpu": "X"}
                 for s in scale_steps.STEPS}  # fmt: skip
        steps["dataset"] = {"seconds": dataset, "peak_rss_gb": 3.0, "bases": bases, "cpu": "X"}
        steps["scan"] = {"seconds": scan_s, "peak_rss_gb": scan_gb, "bases": bases, "cpu": "X",
                         "summary": {"scan_seconds": scan_s / 2}}  # fmt: skip
        steps["variants"]["peak_rss_gb"] = var_gb
        result["sizes"][label] = {"bases": bases, "steps": steps,
                                  "genome": {"sequences": 5, "annotated_bases": bases // 2,
                                             "genes": 1000}}  # fmt: skip
    return result


def test_markdown_section_from_a_made_up_json(tmp_path):
    result = _fabricated({"100M": (60, 80, 1.0, 1.0), "300M": (180, 240, 1.1, 1.05),
                          "1G": (600, 1000, 1.5, 1.1)})  # fmt: skip
    text = scale_report.render_markdown(result, tmp_path / "bench_scale.json")
    assert "| `dataset` | 60.0 s, 3.00 GB | 180.0 s, 3.00 GB | 600.0 s, 3.00 GB |" in text
    assert ("| `scan` rate (model pass alone) | 1.25 Mb/s (2.50 Mb/s) | 1.25 Mb/s (2.50 Mb/s) | "
            "1.00 Mb/s (2.00 Mb/s) |") in text
    assert "| `scan` | 300M -> 1G | 3.33 | 4.17 | 1.25 | **no** | 1.36 |" in text
    assert "| `dataset` | 100M -> 1G | 10.00 | 10.00 | 1.00 | yes | 1.00 |" in text
    assert "`dataset` at 1 Gb: <= 15 min | 10.0 min | **met** |" in text
    assert "`scan` peak memory flat (within 20%), 100 Mb to 1 Gb | 100M 1.00 GB -> 1G 1.50 GB " \
        "(x1.50) | **not met** |" in text
    assert "`variants` peak memory flat (within 20%), 100 Mb to 1 Gb | 100M 1.00 GB -> 1G " \
        "1.10 GB (x1.10) | **met** |" in text
    assert "above x1.20 per base: scan x1.25" in text
    assert "Missing" not in text and "provisional)" not in text
    # only two sizes so far: 1G is named missing and the floors are provisional
    partial = _fabricated({"100M": (60, 80, 1.0, 1.0), "300M": (180, 240, 1.1, 1.05)})
    partial["requested"] = ["100M", "300M", "1G"]
    text = scale_report.render_markdown(partial, tmp_path / "bench_scale.json")
    assert "**Missing:** not measured yet: 1G" in text
    assert "| `dataset` at 1 Gb: <= 15 min | 1G not measured | not measured yet |" in text
    assert "**met** (provisional)" in text
    # the section goes into BENCHMARKS.md between its markers
    from benchmarks.report import update_section

    md = tmp_path / "BENCHMARKS.md"
    update_section(md, scale.SECTION, text)
    assert "<!-- bench:scale:start -->" in md.read_text()


def test_the_command_line_takes_sizes_and_refuses_bad_ones():
    from click.testing import CliRunner

    from benchmarks.cli import main

    result = CliRunner().invoke(main, ["scale", "--out", "x", "--sizes", "1G,big"])
    assert result.exit_code == 2 and "'big' is not a size" in result.output
    help_text = CliRunner().invoke(main, ["scale", "--help"]).output
    assert "--resume / --no-resume" in help_text and "100M,300M,1G" in help_text


def test_end_to_end_at_one_megabase(tmp_path):
    """``python -m benchmarks scale`` at 1 Mb with a tiny training budget, every step real
    (~50 s on 2 cores)."""
    md = tmp_path / "BENCHMARKS.md"
    sets = ["train.core_samples=100", "train.final_samples=100", "train.max_samples=100",
            "data.test_windows=60", "data.val_windows=20", "train.eval_every=100"]  # fmt: skip
    command = [sys.executable, "-m", "benchmarks", "scale", "--out", str(tmp_path / "s"),
               "--sizes", "1M", "--variants", "500", "--benchmarks-md", str(md), "--bfloat16",
               *[a for s in sets for a in ("--set", s)]]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    saved = json.loads((tmp_path / "s" / "bench_scale.json").read_text())
    steps = saved["sizes"]["1M"]["steps"]
    assert list(steps) == list(scale_steps.STEPS)
    assert all(s["seconds"] > 0 and s["peak_rss_gb"] > 0.05 for s in steps.values())
    train = steps["train"]["summary"]
    assert 100 <= train["samples_seen"] < 200 and train["stopped_by"] == "schedule"
    assert steps["scan"]["summary"]["bases"] == steps["scan"]["bases"] == 1_000_000
    assert steps["variants"]["summary"]["counts"]
    assert "| `scan` rate (model pass alone) |" in md.read_text()
    fast = saved["sizes"]["1M"][scale_steps.BF16_STEP]
    agree = fast["agreement"]
    assert fast["summary"]["bases"] == 1_000_000 and agree["float32_sites"] > 0
    assert agree["shared"] <= min(agree["float32_sites"], agree["bfloat16_sites"])
    assert 0.5 < agree["jaccard"] <= 1 and "`scan --precision bfloat16` at 1M" in md.read_text()
