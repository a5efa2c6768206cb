"""The workflow's plans (dry runs, lint, the SLURM profile) and the configs it refuses before
any job: the tiny reference, nothing trained."""

import shutil

import pytest

from tests.conftest import REPO, TINY_FASTA
from tests.pipelines.snakemake_run import SNAKEMAKE, TINY_CONFIG, job_counts, snakemake

RULE_FILES = sorted((REPO / "pipelines" / "rules").glob("*.smk"))

pytestmark = pytest.mark.skipif(not SNAKEMAKE.exists(), reason="snakemake not installed")


def test_dry_run_and_lint_are_clean(tmp_path):
    result = snakemake(tmp_path, "-n", "--cores", "2", "--configfile", TINY_CONFIG)
    assert result.returncode == 0, result.stderr[-2000:]
    lint = snakemake(tmp_path, "--lint", "--configfile", TINY_CONFIG)
    assert lint.returncode == 0, lint.stdout[-3000:] + lint.stderr[-3000:]


def test_default_config_dry_run_plans_every_rule(tmp_path):
    result = snakemake(tmp_path, "-n", "--cores", "2")
    assert result.returncode == 0, result.stderr[-2000:]
    assert job_counts(result.stdout) == {"dataset": 1, "train": 2, "compare": 1, "export": 1,
                                          "scan": 1, "report": 1, "all": 1, "total": 8}  # fmt: skip


def test_planted_config_file_extends_the_default(tmp_path):
    """`--configfile pipelines/config/planted.yaml` (no genomes): the default job + planted."""
    planted = REPO / "pipelines" / "config" / "planted.yaml"
    result = snakemake(tmp_path, "-n", "--cores", "2", "--configfile", planted)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "results/tair10-chr1/splicing/seed0/report.html" in result.stdout
    assert "results/planted/seed0/report.html" in result.stdout
    assert job_counts(result.stdout)["train"] == 3


def _plan(tmp_path, text: str):
    """The dry run (commands printed) of config ``text``: the result and its job counts."""
    config = tmp_path / "plan.yaml"
    config.write_text(text)
    result = snakemake(tmp_path, "-n", "-p", "--cores", "2", "--configfile", config)
    assert result.returncode == 0, result.stderr[-2000:]
    return result, job_counts(result.stdout)


def test_seeds_genomes_and_the_planted_target_fan_out(tmp_path):
    result, counts = _plan(
        tmp_path,
        "genomes: {tiny: {reference: tiny}, tiny2: {reference: tiny, labels: [donor]}}\n"
        "runs: {a: {genome: tiny, preset: tiny, seeds: [0, 1]}, b: {genome: tiny2, "
        "preset: tiny, baseline: false, scan: false}}\n"
        "planted: {enabled: true, preset: tiny, seeds: [3], diagnostics: 1000}\n",
    )
    # train: a's 2 seeds x (Sparling, baseline) + b's Sparling + planted's Sparling
    assert counts["dataset"] == 2 and counts["train"] == 6 and counts["scan"] == 2
    assert counts["compare"] == counts["export"] == counts["report"] == 4
    assert counts["stability"] == 1  # run a has two seeds; b and planted have one
    assert "results/tiny/a/stability.json" in result.stdout
    for job in ("tiny/a/seed0", "tiny/a/seed1", "tiny2/b/seed0", "planted/seed3"):
        assert f"results/{job}/report.html" in result.stdout, job
    commands = [line for line in result.stdout.splitlines() if "sparling_genomics.cli" in line]
    planted = [c for c in commands if "results/planted/seed3/" in c]
    train = [c for c in planted if " train " in c]
    assert len(train) == 1 and "--task planted --preset tiny --seed 3" in train[0]
    assert "--dataset" not in train[0] and "--baseline" not in train[0]
    assert "--set train.keep_checkpoints_every=1000" in train[0] and counts["diagnose"] == 1
    assert not any("--jaspar-release" in c for c in planted if " export " in c)
    assert all("--jaspar-release JASPAR2026" in c for c in commands
               if " export " in c and "results/planted/" not in c)  # fmt: skip
    stability = [c for c in commands if " stability " in c]
    assert len(stability) == 1 and all(f"--model results/tiny/a/seed{s}/sparling" in stability[0]
                                       for s in (0, 1))  # fmt: skip
    reports = [c for c in commands if " report " in c]
    assert sum("--stability results/tiny/a/stability.json" in c for c in reports) == 2
    # Each seed's sites carry their consensus family (b and planted do not scan).
    scans = [c for c in commands if " scan " in c]
    assert len(scans) == 2 and all("--stability results/tiny/a/stability.json" in c
                                   for c in scans)  # fmt: skip


def test_rule_files_spell_no_paths():
    """Every output, log and benchmark path comes from the path helpers of common.smk."""
    for smk in RULE_FILES:
        text = smk.read_text()
        for spelled in ("OUT /", '"logs/', '"timings/', "seed{seed}", '"results/'):
            assert spelled not in text or smk.name == "common.smk", (smk.name, spelled)
    common = (REPO / "pipelines" / "rules" / "common.smk").read_text()
    assert common.count('f"seed{seed}"') == 1


def test_slurm_profile_resolves(tmp_path):
    result = snakemake(tmp_path, "-n", "--profile", REPO / "pipelines" / "profiles" / "slurm",
                       "--configfile", TINY_CONFIG)  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    train = result.stdout.split("rule train:")[1].split("Shell command")[0]
    # One GPU request (the rule's gpu=1; no gres beside it, which the plugin refuses).
    assert "slurm_partition=gpu" in train and "gpu=1" in train and "gres=" not in train


def test_scan_job_bases_scatters_by_genome_size(tmp_path):
    """`scan_job_bases` turns each genome's length into its scan's jobs (the tiny reference:
    300,000 bases, so 70,000 a job -> 5 parts), in a run and in `apply:` alike."""
    result, counts = _plan(
        tmp_path,
        "genomes: {tiny: {reference: tiny}, other: {reference: tiny}}\n"
        "runs: {s: {genome: tiny, preset: tiny, scan_job_bases: 70000}}\n"
        "apply: {model: s, genomes: [other], scan_job_bases: 300000}\n",
    )
    assert counts["scan_part"] == 5 and "apply_scan_part" not in counts  # 300,000 in one job
    assert "--gather 5" in result.stdout and "--part 5/5" in result.stdout


def _bad(tmp_path, text):
    config = tmp_path / "bad.yaml"
    config.write_text(text)
    return snakemake(tmp_path, "-n", "--cores", "1", "--configfile", config)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: tiny, tpyo: 1}}\n", "tpyo"),
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: tiny, seeds: 3}}\n", "seeds"),
        ("genomes: {g: {fasta: /nonexistent/g.fa, gff: /nonexistent/g.gff3}}\n"
         "runs: {s: {genome: g}}\n", "/nonexistent/g.fa"),
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: other}}\n", "runs.s.genome"),
        # Names become folders: one that would leave outdir is refused.
        ("genomes: {../evil: {reference: tiny}}\nruns: {s: {genome: ../evil}}\n", "../evil"),
        ("genomes: {tiny: {reference: tiny}}\nruns: {a/b: {genome: tiny}}\n", "a/b"),
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: tiny}}\n"
         "apply: {model: s, genomes: [mars]}\n", "apply.genomes: 'mars' is not a key"),
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: tiny}}\n"
         "apply: {model: s, seed: 4, genomes: [tiny]}\n", "apply.seed: 4 is not one of"),
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: tiny}}\n"
         "apply: {model: /nonexistent/run, genomes: [tiny]}\n",
         "apply.model: '/nonexistent/run' is neither a key of runs nor a finished run"),
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: tiny}}\n"
         "apply: {genomes: [tiny]}\n", "model"),
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: tiny, scan_job_bases: 0}}\n",
         "scan_job_bases"),
        ("genomes: {tiny: {reference: tiny}}\n"
         "runs: {s: {genome: tiny, scan_jobs: 4, scan_job_bases: 1000}}\n",
         "config: runs.s: give scan_jobs or scan_job_bases, not both"),
        # A plan of jobs the scan cannot use, refused with the number it would make: 50 meant
        # as 50 Mb, more jobs than the 300 kb genome has 50 kb chunks (in apply: too).
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: tiny, scan_job_bases: 50}}\n",
         "config: runs.s: scan_job_bases 50 would make 6,000 scan jobs for the 300,000 bases "
         "of tiny, but a job scans whole chunks of 50,000 bases: give at least 50000"),
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: tiny, scan_jobs: 100}}\n",
         "config: runs.s: scan_jobs 100 would make 100 scan jobs for the 300,000 bases of "
         "tiny, but at most 6 can have work"),
        ("genomes: {tiny: {reference: tiny}}\nruns: {s: {genome: tiny}}\n"
         "apply: {model: s, genomes: [tiny], scan_job_bases: 1000}\n",
         "config: apply: scan_job_bases 1000 would make 300 scan jobs"),
    ],
)  # fmt: skip
def test_bad_config_stops_before_any_job(tmp_path, text, expected):
    result = _bad(tmp_path, text)
    assert result.returncode != 0
    assert expected in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()


def test_config_yaml_cannot_run_code(tmp_path):
    """A config asking YAML to call a function is refused, and the call never happens."""
    result = _bad(tmp_path, "genomes: !!python/object/apply:os.system ['touch PWNED']\n"
                            "runs: {s: {genome: tiny}}\n")  # fmt: skip
    assert result.returncode != 0
    assert not (tmp_path / "PWNED").exists() and not (REPO / "PWNED").exists()
    assert not (tmp_path / "results").exists()


def test_gff_not_matching_the_fasta_stops_before_any_job(tmp_path):
    fasta = tmp_path / "renamed.fa"
    text = TINY_FASTA.read_text().splitlines()
    fasta.write_text(">chr1\n" + "\n".join(text[1:]) + "\n")
    gff = REPO / "reference" / "tiny" / "tiny.gff3"
    result = _bad(tmp_path, f"genomes: {{g: {{fasta: {fasta}, gff: {gff}}}}}\n"
                            "runs: {s: {genome: g}}\n")  # fmt: skip
    assert result.returncode != 0
    out = result.stdout + result.stderr
    assert "NC_003070.9" in out and "chr1" in out and "genomes.g" in out
    assert not (tmp_path / "results").exists()
    shutil.rmtree(tmp_path / ".snakemake", ignore_errors=True)


def test_chrom_aliases_reconcile_gff_and_fasta_names(tmp_path):
    """The same renamed FASTA passes the pre-flight once an alias file maps the names, and
    the dataset rule is given the alias file."""
    fasta = tmp_path / "renamed.fa"
    text = TINY_FASTA.read_text().splitlines()
    fasta.write_text(">chr1\n" + "\n".join(text[1:]) + "\n")
    aliases = tmp_path / "aliases.tsv"
    aliases.write_text("chr1\tNC_003070.9\n")
    gff = REPO / "reference" / "tiny" / "tiny.gff3"
    config = tmp_path / "aliased.yaml"
    config.write_text(f"genomes: {{g: {{fasta: {fasta}, gff: {gff}, chrom_aliases: {aliases}}}}}\n"
                      "runs: {s: {genome: g}}\n")  # fmt: skip
    result = snakemake(tmp_path, "-n", "-p", "--cores", "1", "--configfile", config)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert f"--chrom-aliases {aliases}" in result.stdout
