"""Thin the training logs of archived runs to the records that carry evidence.

A run moved to ``bench_runs/archive/`` is history: documents quote its steps, the rules that
acted and a few figures, not every evaluation. Its ``train_log.jsonl`` keeps, byte for byte:

* the first and the last record, and the last record of each phase;
* every record where the density, the phase, the probation state, the annealing hold or the
  curriculum length changed from the record before, or where a rule acted (a tightened step, a
  forced one, a rollback, split, tidy, push, resample or restart);
* each phase's best validation record (the one the trainer keeps the weights of);
* records without a sample count (the splicing core phase);
* the records a document quotes: in a paragraph, list item or table row that names the run's
  archive folder or its ``attempt N``, the record nearest each ``NNNk`` sample count, and in
  each of its sentences about validation (or the loss), for each number, the first record
  from the sentence's first sample count on whose validation figure (loss) rounds to it;
* one record in ``EVERY`` of the rest, so that the report still draws the curves.

``bench_runs/archive/thinned_logs.json`` lists each thinned run with the commit that holds
its full log (``git show COMMIT:bench_runs/archive/RUN/train_log.jsonl``), its record
counts and the sample counts of the records kept because a document quotes them;
``tests/benchmarks/test_bench_runs.py`` thins each full log again and compares. Usage
(docs/bench-runs.md, "Thinned training logs"), on runs committed unchanged::

    PYTHONPATH=. .venv/bin/python -m tests.benchmarks.thin_logs bench_runs/archive/FOLDER ...
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from sparling_genomics.io import write_json_atomic, write_text_atomic
from sparling_genomics.rundir import LOG_NAME

REPO = Path(__file__).resolve().parents[2]
ARCHIVE = REPO / "bench_runs" / "archive"
MANIFEST = ARCHIVE / "thinned_logs.json"
#: One record in EVERY of those no other reason keeps.
EVERY = 10
#: Keys a training rule writes into the record of the evaluation where it acted.
ACTED = ("forced", "rolled_back", "split", "tidy", "push", "resample", "restart", "rollback",
         "channel_edit")
#: Keys whose change from one record to the next is a step, a phase, a probation state, an
#: annealing hold or a curriculum length.
CHANGED = ("density", "phase", "probation", "held", "curriculum_tokens")
#: The validation figure a phase's best record is chosen by (the task's accuracy metric).
ACCURACY = ("val_exact_match", "val_mean_topk")
#: What documents are searched for quotes: prose and the comments of the code.
DOCUMENTS = ("README.md", "BENCHMARKS.md", "docs/*.md", "sparling_genomics/**/*.py",
             "benchmarks/*.py", "scripts/*.py")  # fmt: skip


def kept_records(records: list[dict], every: int, pinned: Iterable[int] = ()) -> list[int]:
    """Indices, in order, of the records a thinned log keeps (the module docstring says which);
    ``pinned``: sample counts of records kept because a document quotes them."""
    pinned = set(pinned)
    keep = {0, len(records) - 1} if records else set()
    best: dict[str, int] = {}
    for i, record in enumerate(records):
        before = records[i - 1] if i else {}
        if (
            i % every == 0
            or "samples" not in record
            or record.get("samples") in pinned
            or record.get("tightened") is True
            or any(key in record for key in ACTED)
            or (i and any(record.get(key) != before.get(key) for key in CHANGED))
        ):
            keep.add(i)
        if i and record.get("phase") != before.get("phase"):
            keep.add(i - 1)
        metric = next((record[k] for k in ACCURACY if record.get(k) is not None), None)
        phase = str(record.get("phase"))
        if metric is not None and (phase not in best or metric > _accuracy(records[best[phase]])):
            best[phase] = i
    return sorted(keep | set(best.values()))


def _accuracy(record: dict) -> float:
    return next(record[k] for k in ACCURACY if record.get(k) is not None)


def thinned_text(text: str, every: int, pinned: Iterable[int] = ()) -> str:
    """A log's text with only its kept records (each line as it was)."""
    lines = text.splitlines(keepends=True)
    records = [json.loads(line) for line in lines]
    return "".join(lines[i] for i in kept_records(records, every, pinned))


# -- what documents quote ----------------------------------------------------------------------

_ATTEMPTS = re.compile(r"\battempts? (\d+(?:(?:, | and |-| to )\d+)*)")
_THOUSANDS = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)k\b")
_DECIMAL = re.compile(r"(?<![\w.])(\d+\.(\d+))(?![\w.%])")
#: How a sentence names a validation figure, and the figure's key in the log.
_VALIDATION_WORDS = ((r"\bexact match\b", "val_exact_match"), (r"\btop-k\b", "val_mean_topk"),
                     (r"\bedit error\b", "val_edit_error"), (r"\bFNE\b", "val_fne"),
                     (r"\bFPE\b", "val_fpe"), (r"\bCE\b", "val_ce"))  # fmt: skip
_PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?%")


def run_names(run: Path) -> set[str]:
    """How documents name an archived run: its folders under the archive (not the run's own
    folder inside one, ``draw2_seed0`` being in many) and ``attempt N``."""
    parts = run.relative_to(ARCHIVE).parts
    if len(parts) >= 2 and parts[-2] != "paper_domains":
        parts = parts[:-1]
    names = set(parts) - {"paper_domains"}
    names |= {f"attempt {m[1]}" for p in parts if (m := re.match(r"[a-z_]+?_attempt(\d+)_", p))}
    return names


def _mentioned(paragraph: str) -> set[str]:
    """Folder names and ``attempt N`` (each of a range or list) in one paragraph."""
    names = {token.rstrip(".") for token in re.findall(r"[\w.\-]+", paragraph)}
    for match in _ATTEMPTS.finditer(paragraph):
        for part in re.split(r", | and ", match[1]):
            ends = [int(n) for n in re.split(r"-| to ", part)]
            names |= {f"attempt {n}" for n in range(ends[0], ends[-1] + 1)}
    return names


#: Where a document's next block starts: in Markdown a top-level list item, heading or table
#: row, or unindented text after a blank line (a list item's indented paragraphs and tables
#: are part of it); in code a blank line.
_BLOCKS = {".md": re.compile(r"\n(?=[*#|-]|\d+\. )|\n\s*\n(?=\S)"), ".py": re.compile(r"\n\s*\n")}


@cache
def _paragraphs() -> tuple[tuple[str, frozenset[str]], ...]:
    """Every block of the documents (a paragraph, a list item, a table row), with what it
    names."""
    found = []
    for pattern in DOCUMENTS:
        for path in sorted(REPO.glob(pattern)):
            for block in _BLOCKS[path.suffix].split(path.read_text()):
                paragraph = " ".join(block.split())
                found.append((paragraph, frozenset(_mentioned(paragraph))))
    return tuple(found)


def _quoted_values(sentence: str) -> list[tuple[float, int]]:
    """Each figure in a sentence as (value, decimal places), percentages as fractions."""
    values = [(float(m[1]), len(m[2])) for m in _DECIMAL.finditer(sentence)]
    for m in _PERCENT.finditer(sentence):
        for number in filter(None, m.groups()):
            places = len(number.partition(".")[2])
            values.append((float(number) / 100, places + 2))
    return [(v, p) for v, p in values if 0 < v < 1]  # a 0 or 1 is in too many records


def quoted_samples(run: Path, records: list[dict]) -> list[int]:
    """Sample counts of the records of ``run`` that documents quote: in each paragraph naming
    the run, the record nearest each ``NNNk`` sample count; in each of its sentences about
    validation or the loss, for each figure, the first record from the sentence's first sample
    count on (from the start where it has none) whose figure rounds to it."""
    names = run_names(run)
    counted = [r for r in records if "samples" in r]
    pinned = set()
    for paragraph, mentioned in _paragraphs():
        if not names & mentioned:
            continue
        for sentence in re.split(r";\s|\.\s", paragraph):
            near = [_nearest(counted, float(m[1]) * 1000) for m in _THOUSANDS.finditer(sentence)]
            pinned |= {r["samples"] for r in near if r}
            start = min((r["samples"] for r in near if r), default=0)
            fields = _quoted_fields(sentence)
            for value, places in _quoted_values(sentence) if fields else ():
                first = next((r for r in counted if r["samples"] >= start and any(
                    _rounds_to(r.get(k), value, places) for k in fields)), None)  # fmt: skip
                if first:
                    pinned.add(first["samples"])
    return sorted(pinned)


def _nearest(records: list[dict], quoted: float) -> dict | None:
    """The record whose sample count is nearest a quoted one, if within 2% (+3k) of it."""
    near = min(records, key=lambda r: abs(r["samples"] - quoted), default=None)
    return near if near and abs(near["samples"] - quoted) <= 0.02 * quoted + 3000 else None


def _quoted_fields(sentence: str) -> tuple[str, ...]:
    """The log fields a sentence quotes: the validation figures it names (the accuracy metric
    where it names none), the loss."""
    fields = ("loss",) if re.search(r"\bloss\b", sentence) else ()
    if "validation" in sentence:
        named = tuple(field for word, field in _VALIDATION_WORDS if re.search(word, sentence))
        fields += named or ACCURACY
    return fields


def _rounds_to(figure, value: float, places: int) -> bool:
    """Whether a logged figure, rounded as the quote is, is the quoted value."""
    if isinstance(figure, bool) or not isinstance(figure, (int, float)):
        return False
    return round(figure, places) == round(value, places)


# -- the tool ----------------------------------------------------------------------------------


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip


def thin_runs(folders: Iterable[Path], every: int = EVERY) -> dict:
    """Thin the log of every run under ``folders`` (in the archive, committed unchanged, not
    thinned before) and list it in the manifest; returns the manifest."""
    manifest = json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {"runs": {}}
    logs = []
    for folder in folders:
        folder = Path(folder).resolve()
        if not folder.is_relative_to(ARCHIVE):
            raise SystemExit(f"{folder}: not under {ARCHIVE} (only archived runs are thinned)")
        for log in sorted(folder.rglob(LOG_NAME)):
            rel = log.relative_to(REPO).as_posix()
            if log.parent.relative_to(ARCHIVE).as_posix() in manifest["runs"]:
                continue
            if _git("status", "--porcelain", "--", rel) or not _git("ls-files", rel):
                raise SystemExit(f"{rel}: not committed as it is (commit it before thinning)")
            logs.append(log)
    commit = _git("rev-parse", "HEAD")
    for log in logs:
        text = log.read_text()
        records = [json.loads(line) for line in text.splitlines()]
        pinned = quoted_samples(log.parent, records)
        thinned = thinned_text(text, every, pinned)
        write_text_atomic(log, thinned)
        manifest["runs"][log.parent.relative_to(ARCHIVE).as_posix()] = {
            "full_log": commit, "records": len(records), "kept": thinned.count("\n"),
            "every": every, "pinned_samples": pinned,
        }  # fmt: skip
    manifest = {
        "about": "training logs of archived runs thinned by `python -m tests.benchmarks."
        "thin_logs` (docs/bench-runs.md, \"Thinned training logs\"); a run's full log: "
        "git show FULL_LOG:bench_runs/archive/RUN/train_log.jsonl",
        "runs": dict(sorted(manifest["runs"].items())),
    }
    write_json_atomic(MANIFEST, manifest)
    return manifest


if __name__ == "__main__":
    thin_runs(Path(arg) for arg in sys.argv[1:] or [ARCHIVE])
